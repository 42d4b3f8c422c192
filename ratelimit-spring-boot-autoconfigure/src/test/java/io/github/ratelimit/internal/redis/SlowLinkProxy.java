package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback that puts a slow link between clients and a server: every chunk
 * a client sends reaches the server {@code delay} later, in order. It counts how many
 * chunks are on the link at once, which shows whether a client sends its commands side by
 * side or one after another.
 */
public final class SlowLinkProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int targetPort;

	private final long delayMillis;

	private final ScheduledExecutorService link = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "slow-link");
		thread.setDaemon(true);
		return thread;
	});

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private volatile boolean closed;

	/**
	 * Starts a proxy in front of a server on loopback.
	 * @param targetPort the server's port
	 * @param delayMillis how long each chunk takes from client to server
	 * @throws IOException when no port can be opened
	 */
	public SlowLinkProxy(int targetPort, long delayMillis) throws IOException {
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.targetPort = targetPort;
		this.delayMillis = delayMillis;
		Thread acceptor = new Thread(this::accept, "slow-link-accept");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/**
	 * The port clients connect to.
	 * @return the port
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * The most script calls that were on the link toward the server at once.
	 * @return the count
	 */
	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket();
				upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.targetPort), 5_000);
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream, true);
				pump(upstream, client, false);
			}
			catch (IOException ex) {
				if (!this.closed) {
					continue;
				}
				return;
			}
		}
	}

	private void pump(Socket from, Socket to, boolean delayed) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream()) {
				OutputStream out = to.getOutputStream();
				int read;
				while ((read = in.read(buffer)) >= 0) {
					byte[] chunk = Arrays.copyOf(buffer, read);
					if (!delayed) {
						write(out, chunk);
						continue;
					}
					int calls = scriptCalls(chunk);
					this.maxInFlight.accumulateAndGet(this.inFlight.addAndGet(calls), Math::max);
					this.link.schedule(() -> {
						this.inFlight.addAndGet(-calls);
						write(out, chunk);
					}, this.delayMillis, TimeUnit.MILLISECONDS);
				}
			}
			catch (IOException ex) {
				// a side closed: the other side learns of it when it next writes
			}
		}, "slow-link-pump");
		thread.setDaemon(true);
		thread.start();
	}

	/** Script calls in a chunk of RESP: each starts with the bulk string FCALL, EVALSHA or EVAL. */
	private static int scriptCalls(byte[] chunk) {
		String text = new String(chunk, StandardCharsets.ISO_8859_1).toUpperCase(Locale.ROOT);
		int calls = 0;
		for (String command : new String[] { "\r\nFCALL\r\n", "\r\nEVAL" }) {
			for (int at = text.indexOf(command); at >= 0; at = text.indexOf(command, at + 1)) {
				calls++;
			}
		}
		return calls;
	}

	private static void write(OutputStream out, byte[] chunk) {
		try {
			synchronized (out) {
				out.write(chunk);
				out.flush();
			}
		}
		catch (IOException ex) {
			// the connection is gone
		}
	}

	@Override
	public void close() throws IOException {
		this.closed = true;
		this.link.shutdownNow();
		this.server.close();
		for (Socket socket : this.sockets) {
			socket.close();
		}
	}

}
