% rsp-sdk driver for ETALIS / EP-SPARQL, run by `swipl --traditional -q driver.pl`.
%
% It is driven by shim.py (the JSON-lines side) over a tiny line protocol: each request is one
% Prolog term on stdin; the reply is zero or more result lines and one final line on stdout:
%
%   open(EpSparqlFile, Options)          -> OK
%   register_query(Index, Text, WithinMs) -> OK            (WithinMs = 0: no WITHIN)
%   static([s(S,P,O), ...])              -> OK\t<count>
%   push([e(S,P,O,T), ...])              -> R lines, then OK\t<events>
%   stats                                -> OK\t<key=value ...>
%   close                                -> OK (then halt)
%
% A result line is R\t<seq>\t<t_app>\t<query index>\t<T1>\t<T2>\t<term>\t<term>..., one per
% complex event ETALIS derived while processing input event number <seq>, terms in N-Triples
% syntax (an empty field is an unbound variable). Errors answer ERR\t<message>.
%
% Application time: ETALIS compares datime(Y,M,D,H,Min,S,Counter) terms field by field and
% measures WITHIN windows as differences of the S field, so the driver stamps every event with
% datime(1970,1,1,0,0,T_ms,Seq): S carries the application time in milliseconds (WITHIN is then
% in milliseconds too) and the counter keeps the arrival order of events sharing a timestamp.
%
% ETALIS writes its trace ("*Event: ...") to the current output; that is a null stream (or
% stderr with the console option), so stdout carries the protocol only.

:- initialization(main, main).

:- dynamic(rsp_static/3).
:- dynamic(rsp_query/2).

main :-
    set_stream(user_input, encoding(utf8)),
    set_stream(user_output, encoding(utf8)),
    open_null_stream(Null),
    set_output(Null),
    nb_setval(rsp_seq, 0),
    loop.

loop :-
    catch(read_term(user_input, Request, []), E, (reply_error(E), fail)),
    !,
    (   Request == end_of_file
    ->  halt(0)
    ;   handle(Request),
        loop
    ).
loop :-
    loop.

handle(Request) :-
    catch(
        (   serve(Request, Payload)
        ->  reply_ok(Payload)
        ;   reply_error(failed(Request))
        ),
        Error,
        reply_error(Error)),
    !.

reply_ok(Payload) :-
    format(user_output, "OK\t~w~n", [Payload]),
    flush_output(user_output).

reply_error(Error) :-
    (   Error = failed(Request)
    ->  functor(Request, Name, Arity),
        format(atom(Text), "~w/~w failed", [Name, Arity])
    ;   Error = rsp(Text0)
    ->  Text = Text0
    ;   message_to_codes(Error, Text)
    ),
    one_line(Text, Line),
    format(user_output, "ERR\t~w~n", [Line]),
    flush_output(user_output).

message_to_codes(Error, Text) :-
    catch(message_to_codes_(Error, Text), _, format(atom(Text), "~q", [Error])).
message_to_codes_(Error, Text) :-
    '$messages':translate_message(Error, Lines, []),
    with_output_to(atom(Text), print_message_lines(current_output, '', Lines)).

one_line(Text, Line) :-
    atom_codes(Text, Cs),
    replace_ws(Cs, Out),
    atom_codes(Line, Out).
replace_ws([], []).
replace_ws([C|Cs], [D|Ds]) :-
    ( (C =:= 0'\n ; C =:= 0'\t ; C =:= 0'\r) -> D = 0'  ; D = C ),
    replace_ws(Cs, Ds).

% ---- verbs ------------------------------------------------------------------------------------

serve(open(File, Options), ok) :-
    (   memberchk(console(true), Options)
    ->  set_output(user_error)
    ;   true
    ),
    (   exists_file(File)
    ->  true
    ;   format(atom(M), "ETALIS source ~w not found", [File]), throw(rsp(M))
    ),
    consult(File),
    set_etalis_flag(store_fired_events, on),
    set_etalis_flag(logging, off),
    set_etalis_flag(logging_to_file, off),
    set_etalis_flag(output_temporary_files, off),
    (   memberchk(consumption_policy(Policy), Options)
    ->  set_etalis_flag(event_consumption_policy, Policy)
    ;   true
    ),
    assert(external_trigger(rsp_result/2)).

serve(register_query(Index, Text, Within), ok) :-
    (   rsp_query(Index, _)
    ->  throw(rsp('a query with this index is already registered'))
    ;   true
    ),
    % ep_sparql_parse/2 prints an error and succeeds with an unbound term on a syntax error
    ep_sparql_parse(Text, Parsed),
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
    % would start the tracer on our stdin; compile/3 on select/3 is the same rule without it.
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

serve(static(Triples), N) :-
    forall(member(s(S, P, O), Triples), assertz(rsp_static(S, P, O))),
    length(Triples, N).

serve(push(Events), N) :-
    push_events(Events, 0, N),
    retractall(fired_event(_, _)).  % only ETALIS' justification reads it; keep memory flat

serve(stats, Payload) :-
    statistics(globalused, G),
    statistics(localused, L),
    statistics(trailused, T),
    statistics(program, [Program|_]),
    statistics(garbage_collection, [GcCount, _, GcMs|_]),
    count_clauses(etr_db/5, D5),
    count_clauses(etr_db/6, D6),
    Stacks is G + L + T,
    Heap is Stacks + Program,
    Partial is D5 + D6,
    format(atom(Payload),
           "heap_used=~d stacks_used=~d program=~d gc_count=~d gc_time_ms=~d partial_matches=~d",
           [Heap, Stacks, Program, GcCount, GcMs, Partial]).

serve(close, ok) :-
    reply_ok(ok),
    halt(0).

count_clauses(Name/Arity, N) :-
    functor(Head, Name, Arity),
    (   predicate_property(Head, number_of_clauses(N0))
    ->  N = N0
    ;   N = 0
    ).

% ---- events and results -------------------------------------------------------------------------

push_events([], N, N).
push_events([e(S, P, O, T)|Rest], N0, N) :-
    nb_getval(rsp_seq, Seq0),
    Seq is Seq0 + 1,
    nb_setval(rsp_seq, Seq),
    D = datime(1970, 1, 1, 0, 0, T, Seq),
    event(rdf(S, P, O), [D, D]),
    % stored_event/1 holds every event ETALIS logged (inputs too): take ours, drop the rest
    findall(r(Q, Vals, T1, T2),
            retract(stored_event(event(rsp_result(Q, Vals), [T1, T2]))),
            Results),
    retractall(stored_event(_)),
    (   Results == []
    ->  true
    ;   emit_results(Results, Seq, T),
        flush_output(user_output)
    ),
    N1 is N0 + 1,
    push_events(Rest, N1, N).

emit_results([], _, _).
emit_results([r(Q, Vals, T1, T2)|Rs], Seq, T) :-
    time_ms(T1, M1),
    time_ms(T2, M2),
    format(user_output, "R\t~d\t~w\t~w\t~w\t~w", [Seq, T, Q, M1, M2]),
    (   is_list(Vals)
    ->  forall(member(V, Vals), (nt_term(V, Text), format(user_output, "\t~w", [Text])))
    ;   true
    ),
    nl(user_output),
    emit_results(Rs, Seq, T).

time_ms(datime(_, _, _, _, _, S, _), S) :- !.
time_ms(X, X).

% ---- terms back to N-Triples --------------------------------------------------------------------

nt_term(V, '') :- var(V), !.
nt_term(V, T) :- atom(V), !, format(atom(T), "<~w>", [V]).
nt_term(V, T) :-
    integer(V), !,
    format(atom(T), "\"~d\"^^<http://www.w3.org/2001/XMLSchema#integer>", [V]).
nt_term(V, T) :-
    float(V), !,
    float_lexical(V, L),
    format(atom(T), "\"~w\"^^<http://www.w3.org/2001/XMLSchema#double>", [L]).
nt_term(literal(type(DT, Lex)), T) :- !,
    esc(Lex, E),
    format(atom(T), "\"~w\"^^<~w>", [E, DT]).
nt_term(literal(lang(Lang, Lex)), T) :- !,
    esc(Lex, E),
    format(atom(T), "\"~w\"@~w", [E, Lang]).
nt_term(literal(Lex), T) :- atomic(Lex), !,
    esc(Lex, E),
    format(atom(T), "\"~w\"", [E]).
nt_term(bnode(B), T) :- atomic(B), !,
    format(atom(T), "_:~w", [B]).
nt_term(V, T) :-
    format(atom(A), "~q", [V]),
    esc(A, E),
    format(atom(T), "\"~w\"", [E]).

float_lexical(V, 'NaN') :- V =\= V, !.
float_lexical(V, 'INF') :- V =:= inf, !.
float_lexical(V, '-INF') :- V =:= -inf, !.
float_lexical(V, L) :- format(atom(L), "~w", [V]).

esc(A, E) :-
    atom_codes(A, Cs),
    esc_codes(Cs, Out),
    atom_codes(E, Out).
esc_codes([], []).
esc_codes([C|Cs], Out) :-
    esc_code(C, Out, Rest),
    esc_codes(Cs, Rest).
esc_code(0'\\, [0'\\, 0'\\|R], R) :- !.
esc_code(0'\", [0'\\, 0'\"|R], R) :- !.
esc_code(0'\n, [0'\\, 0'n|R], R) :- !.
esc_code(0'\r, [0'\\, 0'r|R], R) :- !.
esc_code(0'\t, [0'\\, 0't|R], R) :- !.
esc_code(C, [C|R], R).
