package io.github.ratelimit.e2e;

import reactor.blockhound.BlockHound;
import reactor.core.scheduler.ReactorBlockHoundIntegration;

/**
 * BlockHound watching the server's event loops in the reactive overload suites. BlockHound
 * is installed once per JVM, by whichever suite runs first, so every reactive suite
 * installs the same configuration: the reactive behaviour suite's.
 */
final class OverloadBlockHound {

	private OverloadBlockHound() {
	}

	static void install() {
		ReactiveFrontEndBehaviourTests.detectBlockingCalls();
	}

}
