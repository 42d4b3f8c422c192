package io.github.ratelimit.benchmarks.overload;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time the service (a process on this machine, read from {@code /proc}) and the
 * generator have used, so that a row says when a load was limited by the CPU rather than
 * by the dependency.
 */
final class CpuClock {

	private final long appPid;

	private final long nanosPerTick;

	/**
	 * Creates a clock.
	 * @param appPid the service's process id, 0 when unknown
	 * @param ticksPerSecond the kernel's clock ticks per second ({@code getconf CLK_TCK})
	 */
	CpuClock(long appPid, long ticksPerSecond) {
		this.appPid = appPid;
		this.nanosPerTick = 1_000_000_000L / ticksPerSecond;
	}

	/**
	 * The service's user and system CPU time.
	 * @return nanoseconds, or -1 when unknown
	 */
	long app() {
		if (this.appPid <= 0) {
			return -1;
		}
		try {
			String stat = Files.readString(Path.of("/proc", Long.toString(this.appPid), "stat"));
			// the fields after the command name, which may hold spaces, in parentheses
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * this.nanosPerTick;
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	/**
	 * The generator's CPU time.
	 * @return nanoseconds, or -1 when unknown
	 */
	long own() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return -1;
	}

}
