package io.github.ratelimit.e2e;

import reactor.blockhound.BlockHound;
import reactor.core.scheduler.ReactorBlockHoundIntegration;

/**
 * BlockHound watching the server's event loops in the reactive overload suites, allowing
 * what the reactive behaviour suite allows for the same reasons (Spring's and Netty's
 * locks, the console appender).
 */
final class OverloadBlockHound {

	private OverloadBlockHound() {
	}

	static void install() {
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> current.or((thread) -> thread.getName().startsWith("reactor-http-")))
			.allowBlockingCallsInside("org.springframework.util.ConcurrentReferenceHashMap$Segment", "doTask")
			.allowBlockingCallsInside("io.netty.util.concurrent.SingleThreadEventExecutor", "confirmShutdown")
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.allowBlockingCallsInside("ch.qos.logback.core.OutputStreamAppender", "writeBytes")
			.install();
	}

}
