package org.rspsdk.glue;

import java.util.HashSet;
import java.util.Set;

/**
 * The guard of engines that keep JVM-wide state (Esper's default provider, a static dictionary):
 * a second engine in the same JVM would share it and give silently wrong results, so a driver
 * claims its engine in {@code open} and a second claim fails loudly. The runtimes start one JVM
 * per session, so a claim only fails when something opens two sessions in one JVM. SDK glue: a
 * manifest gets it with {@code [glue] sdk = ["driver"]}.
 */
public final class OneEnginePerJvm {
  private static final Set<String> CLAIMED = new HashSet<>();

  private OneEnginePerJvm() {}

  /** Claims {@code engine} for this JVM; {@code why} says what a second one would share. */
  public static synchronized void claim(String engine, String why) {
    if (!CLAIMED.add(engine)) {
      throw new IllegalStateException("one " + engine + " engine per JVM: " + why);
    }
  }
}
