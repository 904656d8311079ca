package org.rspsdk.adapters.jtalis;

import com.jtalis.core.event.EtalisEvent;
import com.jtalis.core.event.EtalisEventListener;
import com.jtalis.core.plengine.logic.Atom;
import java.util.function.Consumer;

/**
 * The Java object ETALIS calls back through InterProlog ({@code java_queue_id}): a subclass of
 * JTALIS' {@link EtalisEventListener}, so ETALIS' own registration path is kept, with methods
 * that take one string each (all this InterProlog can pass under SWI-Prolog 9).
 *
 * <p>{@link #notifyEvent} gets {@code Name \t Ms1 \t Seq1 \t Ms2 \t Seq2 \t Arg \t Arg…} (sent by
 * {@code notify_java_listener/3} of {@code rsp_jtalis.pl}) and hands JTALIS an {@link
 * EtalisEvent} with those exact timestamps and the arguments as string properties; {@link
 * #reply} and {@link #error} carry a goal's answer or error text back to the driver.
 */
public final class Notifications extends EtalisEventListener {
  private final Consumer<EtalisEvent> sink;
  private volatile String reply;
  private volatile String error;

  Notifications(Consumer<EtalisEvent> sink) {
    super(null);
    this.sink = sink;
  }

  public void notifyEvent(String message) {
    String[] f = message.split("\t", -1);
    if (f.length < 5) throw new IllegalArgumentException("bad ETALIS notification: " + message);
    EtalisEvent event =
        new EtalisEvent(
            f[0],
            Stamps.of(number(f[1]), number(f[2])),
            Stamps.of(number(f[3]), number(f[4])),
            args(f));
    sink.accept(event);
  }

  /** The arguments as atoms holding the text as it is (JTALIS' own conversion of strings
   * turns any text with brackets into a Prolog list). */
  private static Object[] args(String[] f) {
    Object[] out = new Object[f.length - 5];
    for (int i = 5; i < f.length; i++) out[i - 5] = new Atom<String>(f[i]);
    return out;
  }

  private static long number(String text) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return Math.round(Double.parseDouble(text));
    }
  }

  public void reply(String text) {
    reply = text;
  }

  public void error(String text) {
    error = text;
  }

  /** The last reply, cleared. */
  String takeReply() {
    String r = reply;
    reply = null;
    return r;
  }

  /** The last error, cleared. */
  String takeError() {
    String e = error;
    error = null;
    return e;
  }
}
