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
    /// /dev/null: the daemonised server would otherwise hold other tests' pipes (and
    /// `Process`'s exit monitoring) open for as long as it lives. Waits for the client to exit.
    private func spawnServer(_ arguments: [String]) throws {
        guard let executable = Self.executable else { throw CocoaError(.executableNotLoadable) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // glibc 2.34+ has it, but its header hides it from Swift: look it up by name.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { throw CocoaError(.featureUnsupported) }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        let argv = ([executable.path, "-S", socket, "-f", "/dev/null"] + arguments).map { strdup($0) }
        let environment = Self.environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + environment).forEach { free($0) } }
        // A dispatch thread blocks most signals, and a spawned process inherits its mask: tmux
        // needs its signals (SIGCHLD, SIGTERM) to manage panes and to exit.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var processID = pid_t()
        let spawned = posix_spawn(&processID, executable.path, &actions, &attributes, argv + [nil], environment + [nil])
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        while waitpid(processID, &status, 0) < 0, errno == EINTR {}
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
        let killer = DispatchWorkItem { process.send(SIGTERM) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 10, execute: killer)
        let data = process.readAllOutput()
        _ = process.waitUntilExit()
        killer.cancel()
        return String(decoding: data, as: UTF8.self)
    }
}
