package org.rspsdk.adapters.csparql09;

import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;
import org.apache.log4j.spi.LoggingEvent;

/**
 * log4j for the engine: warnings to stderr (the runtime keeps it in the run's logs) and a count
 * of errors.
 *
 * <p>C-SPARQL evaluates windows inside Esper listeners and only <em>logs</em> what fails there;
 * without an appender the failure vanishes and the relation is silently lost. The manifest sets
 * {@code log4j.defaultInitOverride} so no jar's own log4j.properties is read (the 0.9 jar's
 * writes EC-log.log into the working directory), and this class is the only configuration.
 */
final class EngineLog extends AppenderSkeleton {
  private final String engine;
  private long errors;
  private String last;
  private long seen;

  private EngineLog(String engine) {
    this.engine = engine;
  }

  static EngineLog install(String engine) {
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

  synchronized long errors() {
    return errors;
  }

  synchronized String last() {
    return last;
  }

  /** Throws when the engine logged errors since the last check (a window evaluation failed). */
  synchronized void check(String verb) {
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
