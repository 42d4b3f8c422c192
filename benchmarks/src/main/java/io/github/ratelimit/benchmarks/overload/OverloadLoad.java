package io.github.ratelimit.benchmarks.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.benchmarks.loop.Options;

/**
 * The load generator of {@code benchmarks/overload-bench.sh}: drives the overload
 * benchmark's service ({@code benchmarks/overload-app}) in an open loop at multiples of
 * its capacity and prints one markdown row per load (see {@link Tally#HEADER}).
 * <p>
 * {@code --mode levels} (the default) warms up at 0.5× then 1×, then runs each of {@code --loads}
 * for {@code --duration} seconds, waiting between loads until the service's dependency is
 * idle again, so that no load inherits the one before's backlog. {@code --mode recovery}
 * runs 0.5× for {@code --before} seconds, 4× for {@code --duration}, then 0.5× for
 * {@code --after}, sampling the learned limit at {@code --limit-path} every 100 ms, and
 * prints the three phases and a row of {@link Recovery#HEADER}. {@code --mode header}
 * prints the tables' headers. Requests go to loopback only.
 */
public final class OverloadLoad {

	private OverloadLoad() {
	}

	/**
	 * Runs the generator.
	 * @param args {@code --name value} pairs: {@code --url http://127.0.0.1:PORT} (required),
	 * {@code --variant} (the row's label), {@code --capacity} (requests per second, 800),
	 * {@code --loads} (1,2,4), {@code --warmup} (10 s), {@code --duration} (20 s),
	 * {@code --slo-ms} (100), {@code --critical-share} (0.2), {@code --timeout-ms} (2000),
	 * {@code --max-outstanding} (6000), {@code --drain} (60 s), {@code --app-pid} and
	 * {@code --clock-ticks} (the service's process and {@code getconf CLK_TCK}, for the
	 * service's CPU time), and for the recovery
	 * {@code --limit-path} (/actuator/ratelimits), {@code --before} (10 s), {@code --after}
	 * (20 s)
	 * @throws InterruptedException when interrupted
	 */
	public static void main(String[] args) throws InterruptedException {
		Options options = Options.parse(args);
		String mode = options.get("mode", "levels");
		if (mode.equals("header")) {
			System.out.println(Tally.HEADER);
			System.out.println();
			System.out.println(Recovery.HEADER);
			return;
		}
		URI base = URI.create(options.required("url"));
		if (!"127.0.0.1".equals(base.getHost()) && !"localhost".equals(base.getHost())) {
			throw new IllegalArgumentException("--url must be on loopback (127.0.0.1): " + base);
		}
		String variant = options.get("variant", "?");
		double capacity = Double.parseDouble(options.get("capacity", "800"));
		Duration duration = Duration.ofSeconds(options.number("duration", 20));
		long sloMicros = TimeUnit.MILLISECONDS.toMicros(options.number("slo-ms", 100));
		OpenLoop.Settings settings = new OpenLoop.Settings(Double.parseDouble(options.get("critical-share", "0.2")),
				Duration.ofMillis(options.number("timeout-ms", 2000)), (int) options.number("max-outstanding", 6000));
		ExecutorService executor = Executors.newFixedThreadPool(2, (runnable) -> {
			Thread thread = new Thread(runnable, "http-client");
			thread.setDaemon(true);
			return thread;
		});
		HttpClient client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(settings.timeout())
			.executor(executor)
			.build();
		CpuClock cpu = new CpuClock(options.number("app-pid", 0), options.number("clock-ticks", 100));
		OpenLoop loop = new OpenLoop(client, base.resolve("/work"), settings, cpu);
		LimitProbe probe = new LimitProbe(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
		URI state = base.resolve("/bench/state");
		Duration drain = Duration.ofSeconds(options.number("drain", 60));
		Duration answers = settings.timeout().plusSeconds(5);
		if (mode.equals("recovery")) {
			Duration before = Duration.ofSeconds(options.number("before", 10));
			Duration after = Duration.ofSeconds(options.number("after", 20));
			List<OpenLoop.Phase> phases = List.of(new OpenLoop.Phase(capacity / 2, before, new Tally(sloMicros)),
					new OpenLoop.Phase(capacity * 4, duration, new Tally(sloMicros)),
					new OpenLoop.Phase(capacity / 2, after, new Tally(sloMicros)));
			Recovery recovery = new Recovery();
			recovery.start(probe, base.resolve(options.get("limit-path", "/actuator/ratelimits")));
			loop.drive(phases);
			recovery.stop();
			loop.awaitAnswers(answers);
			String[] labels = { "0.5× before", "4× overload", "0.5× after" };
			for (int i = 0; i < phases.size(); i++) {
				OpenLoop.Phase phase = phases.get(i);
				System.out.println(phase.tally().row(variant, labels[i], seconds(phase.duration()), capacity));
				System.err.println("# " + variant + " recovery " + labels[i] + ": " + phase.tally().notes());
			}
			System.out.println();
			System.out.println(recovery.row(variant, before.toNanos(), duration.toNanos()));
			return;
		}
		if (!mode.equals("levels")) {
			throw new IllegalArgumentException("--mode must be levels, recovery or header: " + mode);
		}
		Duration warmup = Duration.ofSeconds(options.number("warmup", 10));
		if (!warmup.isZero()) {
			// half at 0.5×, so that the service compiles its hot paths before it is loaded
			Duration half = warmup.dividedBy(2);
			Tally gentle = new Tally(sloMicros);
			Tally full = new Tally(sloMicros);
			loop.drive(List.of(new OpenLoop.Phase(capacity / 2, half, gentle),
					new OpenLoop.Phase(capacity, warmup.minus(half), full)));
			loop.awaitAnswers(answers);
			System.out.println("<!-- warm-up " + gentle.row(variant, "0.5×", seconds(half), capacity) + " -->");
			System.out.println("<!-- warm-up " + full.row(variant, "1×", seconds(warmup.minus(half)), capacity) + " -->");
			awaitIdle(probe, state, drain);
		}
		for (String load : options.list("loads", "1,2,4")) {
			double multiple = Double.parseDouble(load);
			Tally tally = new Tally(sloMicros);
			loop.drive(List.of(new OpenLoop.Phase(capacity * multiple, duration, tally)));
			boolean answered = loop.awaitAnswers(answers);
			System.out.println(tally.row(variant, load + "×", seconds(duration), capacity));
			System.err.println("# " + variant + " " + load + "×: " + tally.notes()
					+ (answered ? "" : "; requests still outstanding after " + answers.toSeconds() + " s"));
			awaitIdle(probe, state, drain);
		}
	}

	/** Waits until no call is left in the service's dependency (a backlog drains). */
	private static void awaitIdle(LimitProbe probe, URI state, Duration atMost) throws InterruptedException {
		long deadline = System.nanoTime() + atMost.toNanos();
		int inFlight;
		while ((inFlight = probe.dependencyInFlight(state)) != 0) {
			if (System.nanoTime() - deadline >= 0) {
				System.err.println("# the dependency still had " + inFlight + " calls after " + atMost.toSeconds() + " s");
				return;
			}
			Thread.sleep(200);
		}
		// a breath between loads, so that the next one starts from a settled service
		Thread.sleep(1000);
	}

	private static double seconds(Duration duration) {
		return duration.toNanos() / 1e9;
	}

}
