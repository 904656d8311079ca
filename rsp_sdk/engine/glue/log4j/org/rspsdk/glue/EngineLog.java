package org.rspsdk.glue;

import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;
import org.apache.log4j.spi.LoggingEvent;

/**
 * log4j 1.x for an engine driver: warnings to stderr (the runtime keeps it in the run's logs) and
 * a count of errors. SDK glue: a manifest gets it with {@code [glue] sdk = ["log4j"]}.
 *
 * <p>Esper/Jena-era engines (C-SPARQL, CQELS, …) evaluate windows inside Esper listeners and only
 * <em>log</em> what fails there; without an appender the failure vanishes and the relation is
 * silently lost. {@link #check} turns such a logged error into an exception of the verb that
 * triggered it. Set {@code log4j.defaultInitOverride=true} in the manifest's JVM properties so no
 * jar's own log4j.properties is read (C-SPARQL 0.9's writes EC-log.log into the working
 * directory); this class is then the only configuration.
 */
public final class EngineLog extends AppenderSkeleton {
  private final String engine;
  private long errors;
  private String last;
  private long seen;

  private EngineLog(String engine) {
    this.engine = engine;
  }

  /** Replaces the root logger's appenders: WARN and above to stderr, errors counted here. */
  public static EngineLog install(String engine) {
    Logger root = Logger.getRootLogger();
    root.removeAllAppenders();
    root.setLevel(Level.WARN);
    root.addAppender(new ConsoleAppender(new PatternLayout("%-5p %c{1} - %m%n"), "System.err"));
    EngineLog log = new EngineLog(engine);
    root.addAppender(log);
    return log;
  }

  @Override
  protected synchronized void append(LoggingEvent event) {
    if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
      errors++;
      String msg = event.getRenderedMessage();
      if (event.getThrowableInformation() != null) {
        msg = msg + ": " + event.getThrowableInformation().getThrowable();
      }
      last = event.getLoggerName() + ": " + msg;
    }
  }

  /** Errors logged since install. */
  public synchronized long errors() {
    return errors;
  }

  /** The last error (logger: message), or null. */
  public synchronized String last() {
    return last;
  }

  /** Throws when the engine logged errors since the last check (a window evaluation failed). */
  public synchronized void check(String verb) {
    if (errors > seen) {
      long n = errors - seen;
      seen = errors;
      throw new IllegalStateException(
          engine + " logged " + n + " error(s) during " + verb + " (a window evaluation failed and "
              + "its relation was lost); last: " + last);
    }
  }

  @Override
  public void close() {}

  @Override
  public boolean requiresLayout() {
    return false;
  }
}
