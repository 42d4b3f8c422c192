package io.github.ratelimit.redis;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.core.AlgorithmSpec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The composed scripts against the registry of algorithms: every algorithm the registry
 * names is registered in the Lua dispatch table under its code, with as many keys as the
 * store sends for it, and nothing else is.
 */
class RedisScriptsTests {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	@Test
	void dispatchTableHoldsEveryAlgorithmOfTheRegistryWithItsKeys() {
		@SuppressWarnings("rawtypes")
		RedisScript<List> registered = RedisScript.of(RedisScripts.library(AlgorithmSpec.all()) + """

				local codes = {}
				for code in pairs(rl_algorithms) do
				  codes[#codes + 1] = code .. '=' .. rl_algorithm(code).keys
				end
				return codes
				""", List.class);
		@SuppressWarnings("unchecked")
		List<Object> codes = redisConnection.template().execute(registered, List.of());
		assertThat(codes).containsExactlyInAnyOrderElementsOf(AlgorithmSpec.all()
			.stream()
			.map((spec) -> spec.redisCode() + "=" + spec.redisKeySuffixes().size())
			.toList());
	}

	@Test
	void composesEveryAlgorithmScriptIntoBothDrivers() {
		for (AlgorithmSpec spec : AlgorithmSpec.all()) {
			String header = "-- " + spec.redisScript() + ":";
			assertThat(RedisScripts.acquire().getScriptAsString()).contains(header);
			assertThat(RedisScripts.inspect().getScriptAsString()).contains(header);
		}
	}

	@Test
	void composesOnlyTheAlgorithmsACallUsesAndWhatTheyNeed() {
		AlgorithmSpec leaky = AlgorithmSpec.of(Algorithm.LEAKY_BUCKET);
		String script = RedisScripts.acquire(List.of(leaky)).getScriptAsString();
		// the leaky bucket runs the token bucket's functions
		assertThat(script).contains("-- token_bucket.lua:", "-- leaky_bucket.lua:", "-- acquire.lua:")
			.doesNotContain("-- fixed_window.lua:", "-- sliding_window_log.lua:", "-- sliding_window_counter.lua:");
		assertThat(RedisScripts.acquire(List.of(AlgorithmSpec.of(Algorithm.FIXED_WINDOW))).getScriptAsString())
			.contains("-- fixed_window.lua:")
			.doesNotContain("-- token_bucket.lua:");
		@SuppressWarnings("unchecked")
		List<Object> reply = redisConnection.template()
			.execute(RedisScripts.acquire(List.of(leaky)), List.of("scripts:{alice}:lb"), "", "acquire", "1", "lb",
					"5", "1000000", "1", "");
		// remaining 4, the next place free in one interval, no delay
		assertThat(reply.subList(1, 4)).containsExactly(4L, 1_000_000L, 0L);
		assertThat(RedisScripts.acquire(AlgorithmSpec.all()).getSha1()).isEqualTo(RedisScripts.acquire().getSha1());
	}

	@Test
	void refusesAStandaloneScriptOfNoAlgorithm() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisScripts.standalone("acquire.lua"));
	}

}
