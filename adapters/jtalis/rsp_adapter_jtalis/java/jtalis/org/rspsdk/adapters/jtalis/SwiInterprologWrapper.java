package org.rspsdk.adapters.jtalis;

import com.declarativa.interprolog.SubprocessEngine;
import com.jtalis.core.event.EtalisEvent;
import com.jtalis.core.event.EtalisEventListener;
import com.jtalis.core.plengine.InterprologEngineWrapper;
import com.jtalis.core.plengine.logic.Term;
import com.jtalis.core.terms.EventTerm;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.Socket;
import java.util.function.Consumer;

/**
 * JTALIS' InterProlog binding made to work with SWI-Prolog 9 in {@code --traditional} mode.
 *
 * <p>Three things the stock {@link InterprologEngineWrapper} gets wrong there:
 *
 * <ol>
 *   <li>InterProlog runs goals inside its own module, so ETALIS would be consulted into it (its
 *       operators lost, {@code lists:append/3} clashing): every goal runs as {@code user:(G)}.
 *   <li>{@link EventTerm} sends {@code event(E, [T1.0, T2.0])} with {@code getTime()} = millis +
 *       index as a float: the time and the arrival counter are summed into one number, and ETALIS
 *       measures {@code WITHIN} only between {@code datime/7} stamps (on floats the window check
 *       fails and nothing with a window ever fires). Events go as {@code event(E,
 *       [datime(1970,1,1,0,0,Ms,Seq), …])} instead, the stamp the etalis adapter uses: seconds
 *       field = application time in ms, counter = arrival order.
 *   <li>This InterProlog build can only pass {@code string(…)} arguments to Java under SWI 9, and
 *       JTALIS' {@code EtalisEventListener} decodes times as {@code (long) seconds * 1000}
 *       (sub-second parts dropped). ETALIS' {@code notify_java_listener/3} is replaced (in
 *       {@code rsp_jtalis.pl}) by one that sends a single tab-separated string, which {@link
 *       Notifications} decodes into an {@link EtalisEvent} with exact timestamps.
 * </ol>
 */
final class SwiInterprologWrapper extends InterprologEngineWrapper {
  private final Notifications notifications;
  private Process prolog;

  SwiInterprologWrapper(String swiplCommand, Consumer<EtalisEvent> sink) {
    super(swiplCommand, false);
    this.notifications = new Notifications(sink);
    noDelay();
  }

  /**
   * InterProlog talks to Prolog over small socket writes without TCP_NODELAY, so every goal
   * waits out Nagle's algorithm against delayed ACKs (about 90 ms per goal, i.e. per event).
   */
  private void noDelay() {
    try {
      Field f = InterprologEngineWrapper.class.getDeclaredField("engine");
      f.setAccessible(true);
      Object engine = f.get(this);
      Field p = SubprocessEngine.class.getDeclaredField("prolog");
      p.setAccessible(true);
      prolog = (Process) p.get(engine);
      for (String name : new String[] {"socket", "intSocket"}) {
        Field s = SubprocessEngine.class.getDeclaredField(name);
        s.setAccessible(true);
        Object socket = s.get(engine);
        if (socket instanceof Socket sock) sock.setTcpNoDelay(true);
      }
    } catch (ReflectiveOperationException | IOException e) {
      throw new IllegalStateException("cannot set TCP_NODELAY on InterProlog's sockets", e);
    }
  }

  Notifications notifications() {
    return notifications;
  }

  /** Null while swipl runs, else why it is gone (its exit code). */
  String prologExit() {
    if (prolog == null || prolog.isAlive()) return null;
    return "swipl exited (code " + prolog.exitValue() + "); see the engine log";
  }

  /** Ends swipl if JTALIS' shutdown left it running (never leave a process behind). */
  void killProlog() {
    if (prolog != null && prolog.isAlive()) {
      prolog.descendants().forEach(ProcessHandle::destroyForcibly);
      prolog.destroyForcibly();
    }
  }

  @Override
  public boolean execute(Term term) {
    if (term instanceof EventTerm) {
      EtalisEvent e = (EtalisEvent) term.getTerm(0);
      // rsp_jtalis_call: an exception (e.g. a FILTER's arithmetic on an IRI) is sent to
      // Notifications.error, where the driver finds it after the batch
      return executeGoal(
          "rsp_jtalis_call(event("
              + e.getPrologString()
              + ", ["
              + Stamps.datime(e.getTimeStarts())
              + ", "
              + Stamps.datime(e.getTimeEnds())
              + "]))");
    }
    return super.execute(term);
  }

  @Override
  public boolean executeGoal(String goal) {
    return super.executeGoal("user:(" + goal + ")");
  }

  /** JTALIS registers its listener here; InterProlog gets the string-only adapter instead. */
  @Override
  public Object registerPushNotification(EtalisEventListener listener) {
    return super.registerPushNotification(notifications);
  }

  @Override
  public void unregisterPushNotification(EtalisEventListener listener) {
    super.unregisterPushNotification(notifications);
  }
}
