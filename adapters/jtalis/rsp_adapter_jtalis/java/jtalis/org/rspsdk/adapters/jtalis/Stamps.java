package org.rspsdk.adapters.jtalis;

import com.jtalis.core.event.EventTimestamp;

/**
 * Event times between JTALIS and ETALIS: an {@link EventTimestamp} holds the application time in
 * ms ({@code getTimeWithoutIndex}) and the arrival counter ({@code getIndex}); ETALIS gets them
 * as {@code datime(1970,1,1,0,0,Ms,Seq)}, compared field by field, with WITHIN measured on the
 * seconds field (so WITHIN is in ms), exactly as the etalis adapter's driver stamps them.
 */
final class Stamps {
  private Stamps() {}

  static EventTimestamp of(long ms, long seq) {
    EventTimestamp t = new EventTimestamp(ms);
    t.setIndex(seq);
    return t;
  }

  static String datime(EventTimestamp t) {
    return "datime(1970, 1, 1, 0, 0, " + t.getTimeWithoutIndex() + ", " + t.getIndex() + ")";
  }
}
