import CourierTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached tmux server on a socket of its own, running one shell command in a real terminal,
/// so tests can see what `courier` draws on a TTY (`capture-pane -e` keeps the escape codes).
final class TmuxSession: Sendable {
    /// The tmux executable, when one is on `PATH`.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("tmux") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether tmux is available.
    static var isAvailable: Bool { executable != nil }

    /// The server's socket, in the caller's folder so that nothing is left in tmux's own.
    private let socket: String

    private init(socket: String) {
        self.socket = socket
    }

    /// Starts `command` in a new detached session of `columns` × `rows`, its socket in `folder`.
    static func start(
        command: String,
        in folder: URL,
        columns: Int = 160,
        rows: Int = 60
    ) async throws
        -> TmuxSession
    {
        let session = TmuxSession(socket: folder.appendingPathComponent("tmux.sock").path)
        let arguments = ["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", command]
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // Blocking work goes on a thread of its own, never on a dispatch worker (see `CourierRun`).
            Thread { continuation.resume(with: Result { try session.spawnServer(arguments) }) }.start()
        }
        return session
    }

    /// Stops the tmux server and everything it runs.
    func kill() async {
        _ = try? await tmux(["kill-server"], capturesOutput: false)
    }

    /// The pane's text with its escape codes, scrollback included.
    func capture() async throws -> String {
        try await tmux(["capture-pane", "-p", "-e", "-J", "-S", "-"], capturesOutput: true)
    }

    /// Runs tmux on this session's socket, on a thread of its own (it blocks), and returns
    /// its stdout.
    private func tmux(_ arguments: [String], capturesOutput: Bool) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try self.runTmux(arguments, capturesOutput: capturesOutput) }) }
                .start()
        }
    }

    /// Runs the tmux client that starts the server, with no descriptor of this process but
    /// /dev/null (``ChildProcess`` passes no other): the daemonised server would otherwise hold
    /// other tests' pipes open for as long as it lives. Waits for the client to exit.
    private func spawnServer(_ arguments: [String]) throws {
        guard let executable = Self.executable else { throw CocoaError(.executableNotLoadable) }
        let client = try ChildProcess(
            path: executable.path,
            arguments: ["-S", socket, "-f", "/dev/null"] + arguments,
            environment: Self.environment,
            standardOutput: .null,
            standardError: .null
        )
        _ = client.waitUntilExit(killingAfter: 10)
    }

    /// The environment tmux runs with: a colour terminal, no `NO_COLOR`, not nested in a tmux.
    private static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "TMUX")
        environment.removeValue(forKey: "NO_COLOR")
        environment["TERM"] = "xterm-256color"
        return environment
    }

    /// Runs tmux and waits for it, for at most 10 s.
    private func runTmux(_ arguments: [String], capturesOutput: Bool) throws -> String {
        guard let executable = Self.executable else { throw CocoaError(.executableNotLoadable) }
        let process = try ChildProcess(
            path: executable.path,
            arguments: ["-S", socket, "-f", "/dev/null"] + arguments,
            environment: Self.environment,
            standardOutput: capturesOutput ? .pipe : .null,
            standardError: .null
        )
        let data = process.outputAndTermination(killingAfter: 10).output
        return String(decoding: data, as: UTF8.self)
    }
}
