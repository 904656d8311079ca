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

% The EP-SPARQL compilation, static facts, stats, error texts and the terms written back live
% in prolog/rsp_ep_sparql.pl, shared with the jtalis adapter.
:- prolog_load_context(directory, Dir),
   atom_concat(Dir, '/prolog/rsp_ep_sparql.pl', Shared),
   consult(Shared).

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
        format(atom(Line), "~w/~w failed", [Name, Arity])
    ;   catch(rsp_error_text(Error, Line), _, format(atom(Line), "~q", [Error]))
    ),
    format(user_output, "ERR\t~w~n", [Line]),
    flush_output(user_output).

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
    (   memberchk(consumption_policy(Policy), Options)
    ->  true
    ;   Policy = recent
    ),
    rsp_settings(Policy),
    assert(external_trigger(rsp_result/2)).

serve(register_query(Index, Text, Within), ok) :-
    rsp_register_query(Index, Text, Within).

serve(static(Triples), N) :-
    rsp_add_static(Triples, N).

serve(push(Events), N) :-
    push_events(Events, 0, N),
    retractall(fired_event(_, _)).  % only ETALIS' justification reads it; keep memory flat

serve(stats, Payload) :-
    rsp_stats(Payload).

serve(close, ok) :-
    reply_ok(ok),
    halt(0).

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
    rsp_time(T1, M1, _),
    rsp_time(T2, M2, _),
    rsp_row(Vals, Row),
    format(user_output, "R\t~d\t~w\t~w\t~w\t~w\t~w~n", [Seq, T, Q, M1, M2, Row]),
    emit_results(Rs, Seq, T).
