package org.rspsdk.bridge;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The data lane of the bridge server: packed batches and drained results over a loopback socket.
 *
 * <p>py4j moves a {@code byte[]} as base64 inside a text command, which caps a push at a few tens
 * of MB/s; batches are megabytes, so they travel here as raw frames while py4j keeps control.
 * Frames (big-endian): the client first sends {@code u32 len, token bytes} and gets one status
 * byte. Then requests {@code u8 op} with op 1 = push ({@code u32 len, stream IRI, u32 len,
 * payload}), 2 = poll, 3 = ping; every reply is {@code u8 status (0 ok, 1 error), u32 len,
 * payload} where an error payload is JSON {@code {"message", "trace"}}.
 */
public final class DataServer implements Runnable {
  public static final int OP_PUSH = 1;
  public static final int OP_POLL = 2;
  public static final int OP_PING = 3;

  private final Bridge bridge;
  private final ServerSocket server;
  private final byte[] token;

  public DataServer(Bridge bridge, InetAddress address, int port, String token) throws IOException {
    this.bridge = bridge;
    this.server = new ServerSocket(port, 4, address);
    this.token = token.getBytes(StandardCharsets.UTF_8);
  }

  public int port() {
    return server.getLocalPort();
  }

  public void start() {
    Thread t = new Thread(this, "rsp-bridge-data-accept");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void run() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t = new Thread(() -> serve(s), "rsp-bridge-data");
        t.setDaemon(true);
        t.start();
      } catch (IOException ex) {
        if (!server.isClosed()) ex.printStackTrace();
      }
    }
  }

  public void close() throws IOException {
    server.close();
  }

  private void serve(Socket s) {
    try (Socket sock = s) {
      sock.setTcpNoDelay(true);
      DataInputStream in = new DataInputStream(new BufferedInputStream(sock.getInputStream(), 1 << 16));
      DataOutputStream out =
          new DataOutputStream(new BufferedOutputStream(sock.getOutputStream(), 1 << 16));
      byte[] got = new byte[in.readInt()];
      in.readFully(got);
      if (!java.security.MessageDigest.isEqual(got, token)) {
        out.writeByte(1);
        out.flush();
        return;
      }
      out.writeByte(0);
      out.flush();
      byte[] buf = new byte[1 << 20];
      while (true) {
        int op;
        try {
          op = in.readUnsignedByte();
        } catch (EOFException eof) {
          return;
        }
        try {
          if (op == OP_PUSH) {
            byte[] iri = new byte[in.readInt()];
            in.readFully(iri);
            int len = in.readInt();
            if (buf.length < len) buf = new byte[Math.max(len, buf.length * 2)];
            in.readFully(buf, 0, len);
            bridge.push(new String(iri, StandardCharsets.UTF_8), buf, 0, len);
            reply(out, 0, new byte[0]);
          } else if (op == OP_POLL) {
            reply(out, 0, bridge.poll());
          } else if (op == OP_PING) {
            reply(out, 0, new byte[0]);
          } else {
            throw new IllegalArgumentException("unknown data-lane op " + op);
          }
        } catch (IOException io) {
          throw io;
        } catch (Throwable ex) {
          Map<String, Object> err = new LinkedHashMap<>();
          err.put("message", Bridge.describe(ex));
          err.put("trace", Bridge.trace(ex));
          reply(out, 1, Json.write(err).getBytes(StandardCharsets.UTF_8));
        }
      }
    } catch (IOException ex) {
      // the client went away: nothing to answer
    }
  }

  private static void reply(DataOutputStream out, int status, byte[] payload) throws IOException {
    out.writeByte(status);
    out.writeInt(payload.length);
    out.write(payload);
    out.flush();
  }
}
