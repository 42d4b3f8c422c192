package io.github.ratelimit.internal.overload;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A limit that stays where it is set and records the samples it is given.
 */
class RecordingLimit implements AdaptiveLimit {

	final List<Sample> samples = new CopyOnWriteArrayList<>();

	private volatile int limit;

	RecordingLimit(int limit) {
		this.limit = limit;
	}

	void set(int limit) {
		this.limit = limit;
	}

	@Override
	public int limit() {
		return this.limit;
	}

	@Override
	public void onSample(long startNanos, long rttNanos, int inFlight, boolean dropped) {
		onSample(startNanos, rttNanos, inFlight, this.limit, dropped);
	}

	@Override
	public void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
		this.samples.add(new Sample(startNanos, rttNanos, inFlight, ceiling, dropped));
	}

	record Sample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
	}

}
