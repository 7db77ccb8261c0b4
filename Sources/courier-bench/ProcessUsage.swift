import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's CPU time, context switches and peak resident memory so far.
enum ProcessUsage {
    #if canImport(Glibc)
    private static let who = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    private static let who = RUSAGE_SELF
    #endif

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Voluntary and involuntary context switches: a thread that waits for another (a hop
    /// between threads, a wake-up of a sleeping event loop) shows here, where an instruction
    /// count does not see it.
    static func contextSwitches() -> Int {
        var usage = rusage()
        getrusage(who, &usage)
        return Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw)
    }

    static func peakResidentBytes() -> Int64 {
        var usage = rusage()
        getrusage(who, &usage)
        #if canImport(Darwin)
        return Int64(usage.ru_maxrss)  // bytes on Darwin
        #else
        return Int64(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #endif
    }
}
