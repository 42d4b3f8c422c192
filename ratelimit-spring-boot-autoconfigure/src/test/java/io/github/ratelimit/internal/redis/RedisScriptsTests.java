package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;

import static java.util.stream.Collectors.toSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The composed scripts against the registry of algorithms: every algorithm the registry
 * names is registered in the Lua dispatch table under its code, with as many keys as the
 * store sends for it, and nothing else is; a script holds the helpers its code uses and
 * no others.
 */
class RedisScriptsTests {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	@Test
	void dispatchTableHoldsEveryAlgorithmOfTheRegistryWithItsKeys() {
		@SuppressWarnings("rawtypes")
		String listing = """
				local codes = {}
				for code in pairs(rl_algorithms) do
				  codes[#codes + 1] = code .. '=' .. rl_algorithm(code).keys
				end
				return codes
				""";
		RedisScript<List> registered = RedisScript.of(RedisScripts.library(AlgorithmSpec.all(), listing) + listing,
				List.class);
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
	void composesOnlyTheHelpersAScriptUses() {
		String tokenBucket = RedisScripts.acquire(List.of(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET)))
			.getScriptAsString();
		// integers as text (the window algorithms) and existence (the inspecting driver) are
		// not what a token bucket's decision needs, so its calls do not define them
		assertThat(tokenBucket).contains("local function rl_read(", "local function rl_write(")
			.doesNotContain("local function rl_int(", "local function rl_exists(");
		assertThat(RedisScripts.acquire(List.of(AlgorithmSpec.of(Algorithm.FIXED_WINDOW))).getScriptAsString())
			.contains("local function rl_int(");
		assertThat(RedisScripts.inspect().getScriptAsString()).contains("local function rl_exists(");
	}

	@Test
	void everyComposedScriptDefinesEveryHelperItUsesAndCompiles() {
		List<RedisScript<?>> scripts = new ArrayList<>(List.of(RedisScripts.acquire(), RedisScripts.inspect()));
		for (AlgorithmSpec spec : AlgorithmSpec.all()) {
			scripts.add(RedisScripts.acquire(List.of(spec)));
			scripts.add(RedisScripts.standalone(spec.redisScript()));
		}
		Pattern definition = Pattern.compile("(?m)^\\s*local (?:function )?(\\w+)");
		Pattern use = Pattern.compile("\\b(?:rl|RL)_\\w+");
		for (RedisScript<?> script : scripts) {
			String code = script.getScriptAsString().replaceAll("--[^\\n]*", "");
			Set<String> defined = definition.matcher(code).results().map((found) -> found.group(1)).collect(toSet());
			Set<String> used = use.matcher(code).results().map(MatchResult::group).collect(toSet());
			assertThat(defined).as(script.getSha1()).containsAll(used);
			// Redis compiles it: a helper cut in two by the composing would not
			assertThat(redisConnection.template()
				.execute((RedisCallback<String>) (connection) -> connection.scriptingCommands()
					.scriptLoad(script.getScriptAsString().getBytes(StandardCharsets.UTF_8))))
				.isEqualTo(script.getSha1());
		}
	}

	@Test
	void refusesAStandaloneScriptOfNoAlgorithm() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisScripts.standalone("acquire.lua"));
	}

}
