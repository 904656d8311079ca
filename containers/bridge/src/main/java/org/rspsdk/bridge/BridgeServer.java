package org.rspsdk.bridge;

import java.io.PrintStream;
import java.net.InetAddress;
import java.security.SecureRandom;
import py4j.GatewayServer;

/**
 * {@code java -cp … org.rspsdk.bridge.BridgeServer --driver CLASS [--port 0] [--data-port 0]
 * [--host 127.0.0.1] [--no-stdin-watch]}: one engine driver served over py4j (control verbs, entry
 * point = a {@link Bridge}) and a {@link DataServer} (packed batches), both on loopback.
 *
 * <p>When both listen it prints one line on stdout, {@code RSP-BRIDGE-READY port=P
 * data_port=D}, then sends {@code System.out} to stderr so engine chatter never reaches the
 * parent's protocol pipe. Clients authenticate with the token in {@code $RSP_BRIDGE_TOKEN} (py4j
 * auth token and the data lane's first frame); without it a random token is generated and
 * printed on the ready line. Unless {@code --no-stdin-watch}, the server exits when its stdin
 * closes, so a parent that dies (even by SIGKILL) never leaves a JVM behind.
 */
public final class BridgeServer {
  private BridgeServer() {}

  public static void main(String[] args) throws Exception {
    String driverClass = null;
    int port = 0;
    int dataPort = 0;
    String host = "127.0.0.1";
    boolean stdinWatch = true;
    for (int k = 0; k < args.length; k++) {
      switch (args[k]) {
        case "--driver": driverClass = args[++k]; break;
        case "--port": port = Integer.parseInt(args[++k]); break;
        case "--data-port": dataPort = Integer.parseInt(args[++k]); break;
        case "--host": host = args[++k]; break;
        case "--no-stdin-watch": stdinWatch = false; break;
        default:
          System.err.println("unknown argument " + args[k]);
          System.exit(2);
      }
    }
    if (driverClass == null) {
      System.err.println(
          "usage: BridgeServer --driver CLASS [--port 0] [--data-port 0] [--host 127.0.0.1]"
              + " [--no-stdin-watch]");
      System.exit(2);
    }
    String token = System.getenv("RSP_BRIDGE_TOKEN");
    boolean printToken = false;
    if (token == null || token.isEmpty()) {
      byte[] raw = new byte[24];
      new SecureRandom().nextBytes(raw);
      StringBuilder hex = new StringBuilder();
      for (byte b : raw) hex.append(String.format("%02x", b));
      token = hex.toString();
      printToken = true;
    }
    PrintStream protocol = System.out;
    System.setOut(System.err);

    if (stdinWatch) watchStdin();
    Bridge bridge = new Bridge(driverClass);
    InetAddress address = InetAddress.getByName(host);
    GatewayServer gateway =
        new GatewayServer.GatewayServerBuilder(bridge)
            .javaPort(port)
            .javaAddress(address)
            .authToken(token)
            .build();
    gateway.start(true);
    DataServer data = new DataServer(bridge, address, dataPort, token);
    data.start();
    protocol.println(
        "RSP-BRIDGE-READY port="
            + gateway.getListeningPort()
            + " data_port="
            + data.port()
            + (printToken ? " token=" + token : ""));
    protocol.flush();
  }

  /** Exit when stdin reaches EOF: the parent closed it or died. */
  private static void watchStdin() {
    Thread t =
        new Thread(
            () -> {
              try {
                byte[] buf = new byte[256];
                while (System.in.read(buf) != -1) {
                  // the parent writes nothing; reading only detects EOF
                }
              } catch (Exception ignored) {
                // a broken stdin means the parent is gone as well
              }
              Thread killer =
                  new Thread(
                      () -> {
                        try {
                          Thread.sleep(3000);
                        } catch (InterruptedException ignored) {
                          // fall through to halt
                        }
                        Runtime.getRuntime().halt(0);
                      });
              killer.setDaemon(true);
              killer.start();
              System.exit(0);
            },
            "rsp-bridge-stdin-watch");
    t.setDaemon(true);
    t.start();
  }
}
