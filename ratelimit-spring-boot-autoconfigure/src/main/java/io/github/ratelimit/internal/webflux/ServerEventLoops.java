package io.github.ratelimit.internal.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

import io.netty.channel.Channel;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Brings a request back to its connection's event loop after the limiter waited for
 * something that completes on another thread (a Redis reply, a timer), so that the rest of
 * the chain, and the response, run where Reactor Netty expects them.
 * <p>
 * A response written from another thread ends its request on the event loop only later:
 * a keep-alive client can send its next request in between, which Reactor Netty then
 * queues, and a queued request answered at once (by any handler) stops the connection
 * reading on Reactor Netty before 1.3.8 (reactor/reactor-netty#4361). A request that
 * never left its thread is left as it is; on other servers, and for a connection already
 * closed, a stage completing later goes on on Reactor's bounded elastic scheduler, never
 * inline on the thread that completed it.
 */
final class ServerEventLoops {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.Connection",
			ServerEventLoops.class.getClassLoader());

	private static final BiConsumer<Object, Throwable> NOTHING = (result, failure) -> {
	};

	private static final Runnable NO_TASK = () -> {
	};

	private ServerEventLoops() {
	}

	/**
	 * A stage that completes as the given one does, on the exchange's event loop.
	 * @param exchange the exchange
	 * @param stage what the limiter waits for
	 * @return the stage, completing on the event loop where there is one
	 */
	static <T> CompletionStage<T> completeOn(ServerWebExchange exchange, CompletionStage<T> stage) {
		Executor loop = eventLoop(exchange);
		if (loop != null) {
			return stage.whenCompleteAsync(NOTHING, loop);
		}
		if (stage.toCompletableFuture().isDone()) {
			return stage;
		}
		// no event loop to go back to (another server, or a connection its client closed):
		// still never go on on the thread that completes the stage, which may be a store's
		// I/O thread inside its own locks (Lettuce completes commands it cancels while it
		// holds its endpoint's lock, and a command sent from there would wait for it
		// forever), nor on a thread that must not block: sending the next command may wait
		// for that same lock
		return stage.whenCompleteAsync(NOTHING, ServerEventLoops::elsewhere);
	}

	/** Runs a task on Reactor's scheduler for work that may block, which the application's Reactor owns. */
	private static void elsewhere(Runnable task) {
		Schedulers.boundedElastic().schedule(task);
	}

	/**
	 * A signal that completes on the exchange's event loop, to continue on after a delay.
	 * @param exchange the exchange
	 * @return an empty mono completing on the event loop, or at once without one
	 */
	static Mono<Void> resumeOn(ServerWebExchange exchange) {
		Executor loop = eventLoop(exchange);
		return (loop != null) ? Mono.fromCompletionStage(() -> CompletableFuture.runAsync(NO_TASK, loop))
				: Mono.empty();
	}

	private static @Nullable Executor eventLoop(ServerWebExchange exchange) {
		if (!REACTOR_NETTY) {
			return null;
		}
		Object nativeRequest;
		try {
			nativeRequest = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
		}
		catch (IllegalStateException ex) {
			// a request with no server behind it, such as MockServerHttpRequest
			return null;
		}
		return ReactorNetty.eventLoop(nativeRequest);
	}

	/** Loaded only when Reactor Netty is on the class path. */
	private static final class ReactorNetty {

		static @Nullable Executor eventLoop(Object nativeRequest) {
			if (!(nativeRequest instanceof Connection connection)) {
				return null;
			}
			Channel channel = connection.channel();
			try {
				// a connection the client closed leaves its event loop: nothing to keep in order on it
				return channel.isRegistered() ? channel.eventLoop() : null;
			}
			catch (IllegalStateException ex) {
				// deregistered between the check and the call
				return null;
			}
		}

	}

}
