import Foundation

/// Sizes and durations as a person reads them: `512 B`, `1.5 MiB`, `2.3 MiB/s`, `1m05s`.
enum ByteCount {
    /// `bytes` in B, KiB, MiB or GiB, with one decimal from KiB up.
    static func format(_ bytes: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }

    /// A transfer rate, or `–` when none can be given yet.
    static func rate(bytes: Int64, seconds: Double) -> String {
        guard seconds > 0, bytes > 0 else { return "– B/s" }
        return format(Int64(Double(bytes) / seconds)) + "/s"
    }

    /// `seconds` as `42s`, `3m07s` or `2h05m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        switch whole {
        case ..<60: return "\(max(whole, 0))s"
        case ..<3600: return String(format: "%dm%02ds", whole / 60, whole % 60)
        default: return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
        }
    }
}
