package io.github.ratelimit.internal.redis;

import java.util.List;

import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Runs the script through Spring Data Redis, for any connection factory: EVALSHA with
 * EVAL fallback when the server lost the script, bounded by the connection's timeout.
 */
final class TemplateScriptExecutor implements ScriptExecutor {

	private final StringRedisTemplate redis;

	TemplateScriptExecutor(StringRedisTemplate redis) {
		this.redis = redis;
	}

	@Override
	public List<?> execute(Script script, byte[][] keys, byte[][] args) {
		byte[][] keysAndArgs = new byte[keys.length + args.length][];
		System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
		System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
		return this.redis.execute((RedisCallback<List<?>>) (connection) -> {
			try {
				return connection.scriptingCommands().evalSha(script.sha(), ReturnType.MULTI, keys.length, keysAndArgs);
			}
			catch (RuntimeException ex) {
				if (!isNoScript(ex)) {
					throw ex;
				}
				return connection.scriptingCommands().eval(script.bytes(), ReturnType.MULTI, keys.length, keysAndArgs);
			}
		});
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

}
