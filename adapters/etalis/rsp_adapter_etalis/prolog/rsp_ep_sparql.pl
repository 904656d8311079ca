% The EP-SPARQL side both ETALIS adapters share, consulted after ETALIS' ep_sparql.P:
% `etalis` (driver.pl, swipl --traditional behind shim.py) and `jtalis` (JTALIS' Java API,
% JtalisDriver consults it through JtalisContext.consultFile). One copy, so the two adapters run
% the same rules and write the same terms back: any difference in their verdicts comes from the
% way events travel (JTALIS' queues, InterProlog), not from two compilations of a query.
%
%   rsp_settings(Policy)               ETALIS flags of a run (Policy: event consumption policy)
%   rsp_register_query(Index, Text, W) compile an EP-SPARQL SELECT into rules deriving
%                                      rsp_result(Index, Values); W > 0: WITHIN W (ms)
%   rsp_add_static(Triples, N)         assert s(S,P,O) facts as rsp_static/3 (FILTER conditions)
%   rsp_same(A, B), rsp_differ(A, B)   FILTER = and != of two terms (the renderer's, see below)
%   rsp_stats(Payload)                 Prolog memory and ETALIS' partial matches, key=value text
%   rsp_row(Values, Row)               the values as tab-separated N-Triples terms
%   rsp_error_text(Error, Text)        an exception as SWI-Prolog prints it, on one line
%
% Errors are thrown as rsp(Message).

:- dynamic(rsp_static/3).
:- dynamic(rsp_query/2).

rsp_settings(Policy) :-
    set_etalis_flag(logging, off),
    set_etalis_flag(logging_to_file, off),
    set_etalis_flag(output_temporary_files, off),
    set_etalis_flag(event_consumption_policy, Policy).

rsp_register_query(Index, Text, Within) :-
    (   rsp_query(Index, _)
    ->  throw(rsp('a query with this index is already registered'))
    ;   true
    ),
    % ep_sparql_parse/2 prints an error and succeeds with an unbound term on a syntax error
    % (run from JTALIS, through InterProlog, it fails instead: both mean "cannot parse")
    (   ep_sparql_parse(Text, Parsed)
    ->  true
    ;   true
    ),
    (   nonvar(Parsed)
    ->  true
    ;   throw(rsp('ETALIS cannot parse the EP-SPARQL query (ep_sparql_parse/2 left it unbound)'))
    ),
    (   Parsed = select(Vars, Body)
    ->  true
    ;   throw(rsp('the driver runs EP-SPARQL SELECT queries only'))
    ),
    (   is_list(Vars)
    ->  true
    ;   throw(rsp('EP-SPARQL needs the projected variables listed (no SELECT *)'))
    ),
    % ep_sparql_compile/4 and the WITHIN grammar call trace/0 (a leftover of debugging), which
    % would start the tracer on the driver's input; compile/3 on select/3 is the same rule
    % without it.
    (   Within > 0
    ->  atom_number(W, Within),
        Query = select(Vars, Body, literal(type(xsd:integer, W)))
    ;   Query = select(Vars, Body)
    ),
    (   ep_sparql_compile(Query, Rules, _)
    ->  true
    ;   throw(rsp('ETALIS cannot compile the EP-SPARQL query (ep_sparql_compile/3 failed)'))
    ),
    % one named complex event per query, so results of several queries stay apart
    findall(eventClause(L, rsp_result(Index, Head), B),
            member(eventClause(L, select_event(Head), B), Rules),
            Named),
    (   Named == []
    ->  throw(rsp('EP-SPARQL compiled to no select rule'))
    ;   true
    ),
    compile_internal_event_rules(main, Named),
    assert(rsp_query(Index, Text)).

rsp_add_static(Triples, N) :-
    forall(member(s(S, P, O), Triples), assertz(rsp_static(S, P, O))),
    length(Triples, N).

% FILTER(?a = ?b) / FILTER(?a != ?b): ETALIS compiles a relational FILTER to `A is X, B is Y`
% and then the comparison, so an IRI (an atom) raises "is/2: Arithmetic: ... is not a function".
% The renderer writes a comparison of two terms as these goals: numbers by value (62 = 62.0),
% anything else as terms (RDFterm-equal for IRIs, blank nodes and literals).
rsp_same(A, B) :- number(A), number(B), !, A =:= B.
rsp_same(A, B) :- A == B.
rsp_differ(A, B) :- \+ rsp_same(A, B).

rsp_stats(Payload) :-
    statistics(globalused, G),
    statistics(localused, L),
    statistics(trailused, T),
    statistics(program, [Program|_]),
    statistics(garbage_collection, [GcCount, _, GcMs|_]),
    rsp_count_clauses(etr_db/5, D5),
    rsp_count_clauses(etr_db/6, D6),
    Stacks is G + L + T,
    Heap is Stacks + Program,
    Partial is D5 + D6,
    format(atom(Payload),
           "heap_used=~d stacks_used=~d program=~d gc_count=~d gc_time_ms=~d partial_matches=~d",
           [Heap, Stacks, Program, GcCount, GcMs, Partial]).

rsp_count_clauses(Name/Arity, N) :-
    functor(Head, Name, Arity),
    (   predicate_property(Head, number_of_clauses(N0))
    ->  N = N0
    ;   N = 0
    ).

% datime(1970,1,1,0,0,Ms,Seq) as both adapters stamp events, or a plain number
rsp_time(datime(_, _, _, _, _, S, C), S, C) :- !.
rsp_time(X, X, 0).

rsp_row(Vals, Row) :-
    (   is_list(Vals)
    ->  findall(Text, (member(V, Vals), rsp_nt_term(V, Text)), Texts)
    ;   Texts = []
    ),
    atomic_list_concat(Texts, '\t', Row).

rsp_error_text(rsp(Text), Text) :- !.
rsp_error_text(Error, Line) :-
    catch(rsp_message_text(Error, Text), _, format(atom(Text), "~q", [Error])),
    atom_codes(Text, Cs),
    rsp_one_line(Cs, Out),
    atom_codes(Line, Out).

% built with =.. : after ETALIS' operators (jtalis consults this file after ETALIS), the text
% '$messages':translate_message(...) no longer parses
rsp_message_text(Error, Text) :-
    Translate =.. [translate_message, Error, Lines, []],
    Qualified =.. [':', '$messages', Translate],
    call(Qualified),
    with_output_to(atom(Text), print_message_lines(current_output, '', Lines)).

rsp_one_line([], []).
rsp_one_line([C|Cs], [D|Ds]) :-
    ( (C =:= 0'\n ; C =:= 0'\t ; C =:= 0'\r) -> D = 0'  ; D = C ),
    rsp_one_line(Cs, Ds).

% ---- terms back to N-Triples --------------------------------------------------------------------

rsp_nt_term(V, '') :- var(V), !.
rsp_nt_term(V, T) :- atom(V), !, format(atom(T), "<~w>", [V]).
rsp_nt_term(V, T) :-
    integer(V), !,
    format(atom(T), "\"~d\"^^<http://www.w3.org/2001/XMLSchema#integer>", [V]).
rsp_nt_term(V, T) :-
    float(V), !,
    rsp_float_lexical(V, L),
    format(atom(T), "\"~w\"^^<http://www.w3.org/2001/XMLSchema#double>", [L]).
rsp_nt_term(literal(type(DT, Lex)), T) :- !,
    rsp_esc(Lex, E),
    format(atom(T), "\"~w\"^^<~w>", [E, DT]).
rsp_nt_term(literal(lang(Lang, Lex)), T) :- !,
    rsp_esc(Lex, E),
    format(atom(T), "\"~w\"@~w", [E, Lang]).
rsp_nt_term(literal(Lex), T) :- atomic(Lex), !,
    rsp_esc(Lex, E),
    format(atom(T), "\"~w\"", [E]).
rsp_nt_term(bnode(B), T) :- atomic(B), !,
    format(atom(T), "_:~w", [B]).
rsp_nt_term(V, T) :-
    format(atom(A), "~q", [V]),
    rsp_esc(A, E),
    format(atom(T), "\"~w\"", [E]).

rsp_float_lexical(V, 'NaN') :- V =\= V, !.
rsp_float_lexical(V, 'INF') :- V =:= inf, !.
rsp_float_lexical(V, '-INF') :- V =:= -inf, !.
rsp_float_lexical(V, L) :- format(atom(L), "~w", [V]).

rsp_esc(A, E) :-
    atom_codes(A, Cs),
    rsp_esc_codes(Cs, Out),
    atom_codes(E, Out).
rsp_esc_codes([], []).
rsp_esc_codes([C|Cs], Out) :-
    rsp_esc_code(C, Out, Rest),
    rsp_esc_codes(Cs, Rest).
rsp_esc_code(0'\\, [0'\\, 0'\\|R], R) :- !.
rsp_esc_code(0'\", [0'\\, 0'\"|R], R) :- !.
rsp_esc_code(0'\n, [0'\\, 0'n|R], R) :- !.
rsp_esc_code(0'\r, [0'\\, 0'r|R], R) :- !.
rsp_esc_code(0'\t, [0'\\, 0't|R], R) :- !.
rsp_esc_code(C, [C|R], R).
