import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's standard output and error: whether each is a terminal, the styles that follow,
/// and unbuffered writes (bytes go out in order, whatever mix of text and body pieces).
struct Terminal: Sendable {
    /// Whether stdout is a terminal.
    let stdoutIsTerminal: Bool
    /// Whether stderr is a terminal.
    let stderrIsTerminal: Bool
    /// Colours for stdout.
    let outputStyle: TerminalStyle
    /// Colours for stderr.
    let errorStyle: TerminalStyle

    /// The real standard streams, read once.
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Terminal {
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        let stderrIsTerminal = isatty(STDERR_FILENO) == 1
        return Terminal(
            stdoutIsTerminal: stdoutIsTerminal,
            stderrIsTerminal: stderrIsTerminal,
            outputStyle: .forStream(isTerminal: stdoutIsTerminal, environment: environment),
            errorStyle: .forStream(isTerminal: stderrIsTerminal, environment: environment)
        )
    }

    /// Writes `text` to stdout.
    func output(_ text: String) {
        Self.writeAll(Array(text.utf8), to: STDOUT_FILENO)
    }

    /// Writes `bytes` to stdout as they are.
    func output(bytes: some Collection<UInt8>) {
        Self.writeAll(Array(bytes), to: STDOUT_FILENO)
    }

    /// Writes `text` to stderr.
    func error(_ text: String) {
        Self.writeAll(Array(text.utf8), to: STDERR_FILENO)
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and interruptions; a closed
    /// pipe ends the writing quietly.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBufferPointer { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
