package io.github.ratelimit.sample;

import java.time.Instant;
import java.util.UUID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Service;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimited;

/**
 * Sends text messages through a (pretend) SMS gateway. Not a controller: the limit holds
 * for every caller of the bean, web request or not.
 * <p>
 * A token bucket per phone number lets one message through per second. The key is the
 * number in one form ({@link PhoneNumbers}), whoever calls and however they wrote it: a
 * caller cannot get a second bucket for a number by writing it {@code 001…} instead of
 * {@code +1…}. A caller that
 * finds no token waits for one instead of failing ({@code maxWait}): its slot is reserved
 * in the order callers asked, so a burst is delivered at the steady rate rather than all at
 * once. A message that would wait longer than two seconds is refused at once with
 * {@link io.github.ratelimit.RateLimitExceededException} (a 429 when called from a web
 * request).
 */
@Service
public class SmsSender {

	private static final Logger logger = LoggerFactory.getLogger(SmsSender.class);

	/**
	 * Sends a message.
	 * @param phoneNumber the recipient
	 * @param text the message
	 * @return the gateway's receipt
	 */
	@RateLimited(name = "sms", algorithm = Algorithm.TOKEN_BUCKET, capacity = 1, period = "1s", maxWait = "2s",
			keyExpression = "T(io.github.ratelimit.sample.PhoneNumbers).normalize(#phoneNumber)")
	public Receipt send(String phoneNumber, String text) {
		Receipt receipt = new Receipt(UUID.randomUUID().toString(), phoneNumber, Instant.now());
		logger.info("SMS {} sent ({} characters)", receipt.id(), text.length());
		return receipt;
	}

	/**
	 * Proof that the gateway accepted a message.
	 *
	 * @param id the message id
	 * @param phoneNumber the recipient
	 * @param sentAt when the gateway accepted it
	 */
	public record Receipt(String id, String phoneNumber, Instant sentAt) {

	}

}
