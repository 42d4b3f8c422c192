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
 * A leaky bucket per phone number smooths the messages to one per second, with room for
 * three waiting: a burst is delivered at the steady rate rather than all at once, and a
 * message that would wait longer than three seconds is refused with
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
	@RateLimited(name = "sms", algorithm = Algorithm.LEAKY_BUCKET, capacity = 3, period = "3s",
			keyExpression = "#phoneNumber")
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
