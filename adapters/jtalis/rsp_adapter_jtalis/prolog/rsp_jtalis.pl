% JTALIS-side Prolog of the jtalis adapter, consulted (through JtalisContext.consultFile) after
% ETALIS and the shared rsp_ep_sparql.pl. It replaces ETALIS' notify_java_listener/3: the stock
% InterProlog clauses only match datime/7 stamps and call Java methods with double arguments,
% which this InterProlog cannot pass under SWI-Prolog 9 (only string(...) arguments work), and
% JTALIS' listener would drop the sub-second part of every time. Here every notification is one
% string  Name \t Ms1 \t Seq1 \t Ms2 \t Seq2 \t Args...  (Notifications.notifyEvent decodes it):
%   rsp_result(Q, Vals) -> Args = Q \t the values as tab-separated N-Triples terms
%   rsp_barrier(N)      -> Args = N (the driver's end-of-batch marker; ETALIS' fired_event/2
%                          log, which only its justification reads, is emptied there)

notify_java_listener(Event, T1, T2) :-
    java_queue_id(ID),
    rsp_time(T1, M1, C1),
    rsp_time(T2, M2, C2),
    rsp_jtalis_args(Event, Name, Args),
    format(atom(Message), "~w\t~w\t~w\t~w\t~w\t~w", [Name, M1, C1, M2, C2, Args]),
    javaMessage(ID, notifyEvent(string(Message))).

rsp_jtalis_args(rsp_result(Q, Vals), rsp_result, Args) :- !,
    rsp_row(Vals, Row),
    format(atom(Args), "~w\t~w", [Q, Row]).
rsp_jtalis_args(rsp_barrier(N), rsp_barrier, N) :- !,
    retractall(fired_event(_, _)).
rsp_jtalis_args(Event, Name, Args) :-
    functor(Event, Name, _),
    term_to_atom(Event, Args).

% Run Goal; on an exception or failure send its text to Notifications.error, then fail.
rsp_jtalis_call(Goal) :-
    catch(( Goal -> Result = true ; Result = false ), E, Result = error(E)),
    rsp_jtalis_outcome(Result, Goal).

rsp_jtalis_outcome(true, _).
rsp_jtalis_outcome(error(E), _) :-
    rsp_jtalis_error(E),
    fail.
rsp_jtalis_outcome(false, Goal) :-
    functor(Goal, Name, Arity),
    format(atom(Text), "~w/~w failed", [Name, Arity]),
    rsp_jtalis_send(error, Text),
    fail.

rsp_jtalis_error(E) :-
    rsp_error_text(E, Text),
    rsp_jtalis_send(error, Text).

rsp_jtalis_send(Kind, Text) :-
    java_queue_id(ID),
    Message =.. [Kind, string(Text)],
    javaMessage(ID, Message).

% Answer a goal's output to Notifications.reply (e.g. stats).
rsp_jtalis_reply(Goal, Var) :-
    rsp_jtalis_call(Goal),
    rsp_jtalis_send(reply, Var).
