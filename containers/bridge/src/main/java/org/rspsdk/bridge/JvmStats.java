package org.rspsdk.bridge;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * JVM numbers for the {@code stats} verb, read from the platform MXBeans. Reading them takes
 * microseconds and no lock the engine holds, so the sampler can ask every 500 ms while a long
 * push is running on another thread.
 */
public final class JvmStats {
  private JvmStats() {}

  public static Map<String, Object> snapshot() {
    Map<String, Object> m = new LinkedHashMap<>();
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    m.put("heap_used", heap.getUsed());
    m.put("heap_committed", heap.getCommitted());
    m.put("heap_max", heap.getMax());
    long count = 0;
    long time = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
      time += Math.max(0, gc.getCollectionTime());
    }
    m.put("gc_count", count);
    m.put("gc_time_ms", time);
    m.put("threads", ManagementFactory.getThreadMXBean().getThreadCount());
    return m;
  }
}
