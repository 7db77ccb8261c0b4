import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: all mutable state is in `mutableState`, behind one lock.
/// One HTTP request through its whole life: building, each attempt on the wire, validation, and
/// the response handlers, each called exactly once.
///
/// You get requests from a ``Session`` (``DataRequest`` for in-memory bodies). Everything a
/// request exposes is safe to read from any thread. Its lifecycle follows ``State``: `resume()`,
/// `suspend()` and `cancel()` drive it, and adding a response handler resumes it unless the
/// session's ``Session/Configuration/startRequestsImmediately`` is off.
///
/// Requests are compared and hashed by ``id``.
///
/// Concurrency: instead of Alamofire's `underlyingQueue`, a request keeps its mutable state behind
/// one lock and never calls out while holding it; ``serializationQueue`` runs validators and the
/// serializers of completion-handler responses, off the transport's threads (the async API
/// serializes in the task that awaits).
public class Request: @unchecked Sendable {
    /// Where a request is in its life.
    public enum State: String, Sendable, CustomStringConvertible {
        /// Created; nothing sent yet.
        case initialized
        /// Running (or about to: the URLRequest is being built).
        case resumed
        /// Paused; the transport stops reading the response until resumed.
        case suspended
        /// Cancelled by the caller; its handlers see ``CourierError/explicitlyCancelled``.
        case cancelled
        /// Done, successfully or not; its handlers have been called.
        case finished

        /// Whether the lifecycle allows moving from this state to `state`.
        ///
        /// From `initialized`, anything; to `initialized`, or from `cancelled` or `finished`,
        /// nothing; `resumed` and `suspended` may swap or be cancelled but not repeat; anything
        /// else may finish.
        public func canTransitionTo(_ state: State) -> Bool {
            switch (self, state) {
            case (.initialized, _):
                return true
            case (_, .initialized), (.cancelled, _), (.finished, _):
                return false
            case (.resumed, .cancelled), (.suspended, .cancelled), (.resumed, .suspended), (.suspended, .resumed):
                return true
            case (.suspended, .suspended), (.resumed, .resumed):
                return false
            case (_, .finished):
                return true
            }
        }

        /// The state's name.
        public var description: String { rawValue }
    }

    /// What a request records as it runs; guarded by the request's one lock.
    struct MutableState {
        /// A new request's state, held by `session` while it runs.
        init(session: Session) {
            self.session = session
        }

        var machine = StateMachine()
        /// Interceptors added after the request was made (Alamofire 5.11's per-request modifiers).
        var addedInterceptors: [any RequestInterceptor] = []
        /// The monitors added with ``Request/eventMonitor(_:)``, in order; kept for the
        /// request's life, since parse events come after it finishes.
        var addedEventMonitors: [any EventMonitor] = []
        /// The session's monitor followed by ``addedEventMonitors``, once there are any; read
        /// only when the lock is marked (see ``Request/eventMonitor``).
        var eventMonitor: CompositeEventMonitor?
        /// One of ``addedInterceptors`` can retry: response handlers added from then on have
        /// their serializers checked before the request finishes, as with a retrier given at creation.
        var hasAddedRetrier = false
        /// Response handlers' serializers to run before the request finishes, for a retry
        /// decision on their failures (data requests with a retrier; see `SerializerCheck`).
        var serializerChecks: [any SerializerChecking] = []
        /// This request's own answer to "start with the first response handler?"; `nil` defers
        /// to the session's `startRequestsImmediately`.
        var shouldAutomaticallyResume: Bool?
        var initialRequest: RequestHead?
        var requests: [RequestHead] = []
        var performedRequests: [RequestHead] = []
        /// The session, held while the request runs so that a request nobody else holds (made
        /// from `Session()` inline) still finishes; let go when it finishes.
        var session: Session?
        /// The current attempt: only its events count. `nil` before the first, between attempts
        /// and once the request has finished.
        var attempt: Attempt?
        /// The current attempt's transport task.
        var task: (any TransportTask)?
        /// The adaptation or retry decision under way, cancelled with the request.
        var pendingWork: Task<Void, Never>?
        /// The retry delay under way, cancelled with the request or when a trigger starts the
        /// retry sooner.
        var retryWait: Task<Void, Never>?
        /// Fails the request at ``deadline``; cancelled when the request finishes.
        var deadlineTask: Task<Void, Never>?
        var responseHead: ResponseHead?
        var data: Data?
        var metrics: [RequestMetrics] = []
        var error: CourierError?
        var retryCount = 0
        var validators: [Validator] = []
        /// Checks each attempt's response head before its body is read; see `validateResponseHead`.
        var headValidator: (queue: DispatchQueue, validate: @Sendable (HTTPURLResponse) throws -> Void)?
        /// The caller's `onURLRequestCreation`, `cURLDescription(on:calling:)` and
        /// `onHTTPResponse` closures.
        var hooks = RequestHooks()
        var finishHandlers: [@Sendable () -> Void] = []
        /// Awaiting tasks that run an attempt's validation when a validator closure of the
        /// caller's must run and they are waiting (see ``ValidationRunner``).
        var validationRunners: [ValidationRunner] = []
        var bytesReceived: Int64 = 0
        var bytesExpected: Int64 = -1
        var bytesSent: Int64 = 0
        var bytesExpectedToSend: Int64 = -1
        /// This request's own redirect handler, limit and downgrade rule, over the session's.
        var redirectHandler: (any RedirectHandler)?
        var redirectLimit: Int?
        var allowsInsecureRedirects: Bool?
        /// Every redirect followed, over all attempts.
        var redirects: [Redirect] = []
        /// The credential this request answers a `401` with (``Request/authenticate(with:)``).
        var credential: URLCredential?
        /// How this request uses the session's cache (``Request/cache(_:)``).
        var cacheMode = RequestCacheMode.default
        /// This request's own cached-response handler (``Request/cacheResponse(using:)``).
        var cachedResponseHandler: (any CachedResponseHandler)?
        var downloadReporter = ProgressReporter()
        /// A custom request's progress as its delegate computes it (0…1), which the download
        /// progress reports in place of bytes; `nil` for other requests.
        var operationProgress: Double?

        /// The download progress's completed and total counts: bytes, or for a custom request
        /// with progress, millionths of its delegate's fraction.
        var downloadCounts: (completed: Int64, total: Int64) {
            guard let operationProgress else { return (bytesReceived, bytesExpected) }
            return (Int64(operationProgress * 1_000_000), 1_000_000)
        }

        /// The validators and what they read, taken together: a validator added later does not run.
        var validationWork: (validators: [Validator], input: ValidationInput) {
            (validators, ValidationInput(head: responseHead, request: requests.last, bytesReceived: bytesReceived))
        }

        /// What the task should be doing now, or `nil` if that was applied at `generation` already.
        func taskSnapshot(unlessAt generation: UInt64?) -> TaskSnapshot? {
            if let generation, generation == machine.taskGeneration { return nil }
            return (machine.taskGeneration, machine.state, task, machine.isHeldBack)
        }
        /// The `Progress` objects ``Request/uploadProgress`` and ``Request/downloadProgress`` hand
        /// out, made on first read (most requests never read them).
        var progressObjects: (upload: Progress?, download: Progress?)
        /// The request's serial queue, made on first use (see ``Request/serializationQueue``).
        var serializationQueue: DispatchQueue?
        var uploadReporter = ProgressReporter()
    }

    /// The request's identity: requests are equal and hash alike exactly when their ids match.
    public let id: UUID
    /// The serial queue validators and completion-handler serializers run on, off the
    /// transport's threads. The async API (`serializingData()`, …) serializes in the awaiting task,
    /// and runs validator closures there too while it waits.
    /// A download also writes its file on it, so that it finishes on one queue: work you put on
    /// it during a download delays the writes (past 8 MiB waiting, the transfer pauses).
    public var serializationQueue: DispatchQueue {
        mutableState.withLock { state in
            if let queue = state.serializationQueue { return queue }
            // Made on first use: an awaited request validated by Courier's own checks never needs one.
            let queue = DispatchQueue(label: "Courier.Request.serialization", target: serializationTarget)
            state.serializationQueue = queue
            return queue
        }
    }
    /// The session's queue, which the request's own serial queue targets.
    private let serializationTarget: DispatchQueue
    /// The monitor told of every step of the request: the session's monitors, then those added
    /// with ``eventMonitor(_:)``; `nil` when there are none.
    public var eventMonitor: (any EventMonitor)? { monitor }
    /// ``eventMonitor`` as Courier reads it for every event: its own type, not an existential,
    /// so reading it costs a retain.
    var monitor: CompositeEventMonitor? {
        // The usual request has no monitor of its own: its events read a constant, and take the
        // lock only once one was added, which marks the lock (one relaxed atomic load).
        guard mutableState.isMarked else { return sessionEventMonitor }
        return mutableState.withLock { $0.eventMonitor }
    }
    /// The session's monitors, when the request was made.
    let sessionEventMonitor: CompositeEventMonitor?
    /// Posts the request's lifecycle notifications, unless its session turned them off.
    let notifications: CourierNotifications?
    /// This request's own interceptor, which runs before the session's: the one given when it was
    /// made, then those added with ``interceptor(_:)``, ``adapt(using:)`` and ``retry(using:)``,
    /// composed; `nil` if there are none.
    public var interceptor: (any RequestInterceptor)? {
        Self.compose(creationInterceptor, mutableState.withLock { $0.addedInterceptors })
    }
    /// The interceptor given when the request was made.
    let creationInterceptor: (any RequestInterceptor)?
    /// Whether the request, or its session, had a retrier when it was made: then its response
    /// serializers run before it finishes, so that a retrier can act on their failures.
    let mayRetrySerializerFailures: Bool
    /// The session that made the request; `nil` once the session is gone.
    public var delegate: (any RequestDelegate)? { weakSession }
    /// The session, for as long as it exists: a suspended request lets go of its strong hold.
    weak let weakSession: Session?
    /// What builds this request's URLRequest, afresh for every attempt: the caller's own
    /// `URLRequestConvertible`, or Courier's for a URL with a method, headers and parameters.
    public let convertible: any URLRequestConvertible
    /// The delegate-run work of a custom request (``Session/request(using:interceptor:shouldAutomaticallyResume:)``),
    /// which its attempts run in place of the session's transport; `nil` for every other request.
    let customOperation: CustomOperation?

    let mutableState: Protected<MutableState>
    /// What the session's ``RequestContextPropagator``s captured on the task that made the
    /// request; empty when it has none.
    let capturedContexts: [CapturedContext]

    init(
        id: UUID = .makeRandom(),
        convertible: any URLRequestConvertible,
        serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?,
        session: Session,
        customOperation: CustomOperation? = nil,
        lock: Lock = .make()
    ) {
        self.id = id
        self.convertible = convertible
        self.customOperation = customOperation
        self.serializationTarget = serializationQueue
        self.sessionEventMonitor = eventMonitor
        // Read once: a request made before anything could observe (see `CourierNotifications`)
        // posts nothing and pays nothing for them.
        notifications = session.notifications.flatMap { $0.isPosting ? $0 : nil }
        self.creationInterceptor = interceptor
        self.mayRetrySerializerFailures = Session.retries(interceptor) || Session.retries(session.interceptor)
        self.weakSession = session
        // Read here, on the task that makes the request, where its task-local values are.
        capturedContexts =
            session.contextPropagators.isEmpty
            ? [] : session.contextPropagators.map { CapturedContext(propagator: $0, value: $0.captureContext()) }
        // Made with its session in one expression: a local variable set and then handed over was
        // copied and destroyed on the way (about 2,000 instructions). A subclass whose own state
        // shares the lock passes the lock in (see `Protected`).
        self.mutableState = Protected(MutableState(session: session), lock: lock)
    }

    // MARK: - Reading

    /// The current lifecycle state.
    public var state: State { mutableState.withLock { $0.machine.state } }
    /// Whether the state is ``State/initialized``.
    public var isInitialized: Bool { state == .initialized }
    /// Whether the state is ``State/resumed``.
    public var isResumed: Bool { state == .resumed }
    /// Whether the state is ``State/suspended``.
    public var isSuspended: Bool { state == .suspended }
    /// Whether the state is ``State/cancelled``.
    public var isCancelled: Bool { state == .cancelled }
    /// Whether the state is ``State/finished``.
    public var isFinished: Bool { state == .finished }

    /// Every URLRequest built for this request, in order: one per attempt, as adapted by the
    /// interceptors (or, for an attempt whose adapter threw, as it was before adaptation, as in
    /// Alamofire). Each is built when read (see ``RequestHead``); ``requestHead`` reads the
    /// latest without building one.
    public var requests: [URLRequest] { mutableState.withLock { $0.requests }.map(\.urlRequest) }
    /// The first URLRequest built, or `nil` if building failed.
    public var firstRequest: URLRequest? { mutableState.withLock { $0.requests.first }?.urlRequest }
    /// The latest URLRequest built.
    public var lastRequest: URLRequest? { requestHead?.urlRequest }
    /// The latest URLRequest built (same as ``lastRequest``).
    public var request: URLRequest? { lastRequest }
    /// The URLRequests handed to the transport, one per attempt actually sent.
    public var performedRequests: [URLRequest] { mutableState.withLock { $0.performedRequests }.map(\.urlRequest) }
    /// The latest attempt's method, URL and headers, or `nil` if building the request failed:
    /// ``lastRequest`` without a `URLRequest` built for it.
    public var requestHead: RequestHead? { mutableState.withLock { $0.requests.last } }
    /// The latest attempt's response head, or `nil` if none arrived.
    ///
    /// On Linux over AsyncHTTPClient the `HTTPURLResponse` is built on first use (see
    /// ``ResponseHead``); ``responseHead`` reads the status and headers without it.
    public var response: HTTPURLResponse? { responseHead?.httpURLResponse }

    /// The latest attempt's response head, or `nil` if none arrived.
    public var responseHead: ResponseHead? { mutableState.withLock { $0.responseHead } }
    /// The current attempt's transport task; `nil` before the first, between attempts and after the last.
    var task: (any TransportTask)? { mutableState.withLock { $0.task } }
    /// The metrics of every completed attempt, in order.
    public var allMetrics: [RequestMetrics] { mutableState.withLock { $0.metrics } }
    /// The metrics of the latest completed attempt.
    public var metrics: RequestMetrics? { allMetrics.last }
    /// How many times the request was retried: `0` during and after the first attempt.
    public var retryCount: Int { mutableState.withLock { $0.retryCount } }
    /// Why the request failed, once it has; `nil` after success. While a retrier decides, it is
    /// the failed attempt's error.
    public var error: CourierError? { mutableState.withLock { $0.error } }

    // MARK: - Driving

    /// Starts the request, or continues it after ``suspend()``. Does nothing once it has ended.
    @discardableResult
    public func resume() -> Self {
        let (action, session, hasTask) = mutableState.withLock { state in
            let action = state.machine.resume()
            if action != .none, state.session == nil { state.session = weakSession }
            let hasTask = state.task != nil
            // Queued with the change, under the lock: in the order the changes happened.
            if action != .none { post(.didResume) }
            if action == .resumeTask, hasTask { post(.didResumeTask) }
            return (action, state.session, hasTask)
        }
        switch action {
        case .none:
            return self
        case .startFirstAttempt:
            announce(.resume)
            guard session != nil else {
                finish(error: .sessionInvalidated(nil))
                return self
            }
            startAttempt()
        case .resumeTask:
            announce(.resume)
            if hasTask { announce(.resumeTask) }
            applyStateToTask()
        }
        return self
    }

    /// Pauses the request; the transport stops reading its response until ``resume()``.
    @discardableResult
    public func suspend() -> Self {
        let (changed, action, released, suspendsTask) = mutableState.withLock { state in
            let before = state.machine.state
            let action = state.machine.suspend()
            // A paused request does not keep its session alive: one suspended and then let go
            // would otherwise hold the session, its transport and a connection for good (the
            // session, going away, cancels it instead). `resume()` takes the session back.
            let changed = state.machine.state != before
            let released = changed ? state.session : nil
            if changed { state.session = nil }
            // A request still adapting, or waiting to retry, has no task to suspend.
            let suspendsTask = action == .suspendTask && state.task != nil
            if changed { post(.didSuspend) }
            if suspendsTask { post(.didSuspendTask) }
            return (changed, action, released, suspendsTask)
        }
        withExtendedLifetime(released) {}  // Released here, after the lock: a session's end takes request locks.
        guard changed else { return self }
        if action == .suspendTask { applyStateToTask() }
        announce(.suspend)
        if suspendsTask { announce(.suspendTask) }
        return self
    }

    /// Resumes or suspends the current task to match the state as it is now.
    ///
    /// No lock is held while the task is told, so two threads racing (a `suspend()` and a
    /// `resume()`) may tell it in the wrong order. Each change counts a generation; a caller
    /// checks after acting that no change came meanwhile, and acts again on the latest if one
    /// did. The last to change the state is the last to act, and the task ends up as the state says.
    func applyStateToTask(startingWith first: TaskSnapshot? = nil) {
        var next = first ?? mutableState.withLock { $0.taskSnapshot(unlessAt: nil) }
        while let current = next {
            switch current.state {
            case .resumed where current.isHeldBack: current.task?.suspend()
            case .resumed: current.task?.resume()
            case .suspended: current.task?.suspend()
            case .initialized, .cancelled, .finished: break
            }
            next = mutableState.withLock { $0.taskSnapshot(unlessAt: current.generation) }
        }
    }

    /// What the current task should be doing, as of one generation.
    typealias TaskSnapshot = (generation: UInt64, state: State, task: (any TransportTask)?, isHeldBack: Bool)

    /// Cancels the request: its transfer stops and its handlers get ``CourierError/explicitlyCancelled``.
    /// Does nothing once it has finished.
    @discardableResult
    public func cancel() -> Self {
        cancel(dueTo: .explicitlyCancelled)
        return self
    }

    /// Cancels the request as ``cancel()`` does, with `error` as its outcome: what a stream
    /// handler threw, say, so the completion says why the request stopped.
    func cancel(dueTo error: CourierError) {
        // Cancelling and finishing happen under one lock, so no completion or validation can
        // finish the request in between with another outcome.
        // One binding, consumed by `complete`: a second (`guard let x` over an optional) would keep
        // what finishing took, the session with it, alive until this returns (in debug builds).
        var isCancellation = true
        guard
            let outcome = mutableState.withLock({ state -> Finishing? in
                switch state.machine.cancel() {
                case .none:
                    return nil
                case .cancelTaskAndFinish:
                    return takeFinishHandlers(&state, error: error, isCancellation: true)
                case .finishCommitted:
                    // A download whose file is in place: it succeeded; the stop ends the retry decision.
                    isCancellation = false
                    return takeFinishHandlers(&state, error: nil)
                }
            })
        else { return }
        complete(consume outcome, stopsWork: true, isCancellation: isCancellation)
    }

    // MARK: - Attempts (steps of the attempt loop, Request+AttemptLoop.swift)

    /// The URLRequest the caller's parameters built for the latest attempt, before adaptation.
    var initialRequest: RequestHead? { mutableState.withLock { $0.initialRequest } }

    /// Whether the request has finished (or been cancelled), so no further attempt may start.
    var hasFinished: Bool { mutableState.withLock { $0.machine.hasFinished } }

    /// Whether an attempt is due to start (the request was resumed or a retry decided, and no
    /// task exists for it yet), the URLRequest built for the previous attempt, if any, and the
    /// request's own interceptor: one look at the state for all three.
    var attemptToStart: (isDue: Bool, initialRequest: RequestHead?, interceptor: (any RequestInterceptor)?) {
        mutableState.withLock {
            (
                !$0.machine.hasFinished && $0.machine.attemptPhase == .starting, $0.initialRequest,
                Self.compose(creationInterceptor, $0.addedInterceptors)
            )
        }
    }

    /// The interceptor given at creation followed by those added since, in order.
    static func compose(
        _ own: (any RequestInterceptor)?,
        _ added: [any RequestInterceptor]
    ) -> (any RequestInterceptor)? {
        guard !added.isEmpty else { return own }
        guard let own else { return added.count == 1 ? added[0] : Interceptor(interceptors: added) }
        return Interceptor(interceptors: [own] + added)
    }

    /// Holds `work` (an adaptation or a retry decision) so that cancelling the request cancels it.
    func setPendingWork(_ work: Task<Void, Never>) {
        let isOver = mutableState.withLock { state -> Bool in
            if state.machine.hasFinished { return true }
            state.pendingWork = work
            return false
        }
        if isOver { work.cancel() }
    }

    /// Records the request built from the caller's parameters for the next attempt; `false`,
    /// recording nothing, if the request ended meanwhile (a cancel racing a retry's start).
    func didCreateInitialRequest(_ head: RequestHead) -> Bool {
        let isOver = mutableState.withLock { state -> Bool in
            if state.machine.hasFinished { return true }
            state.initialRequest = head
            return false
        }
        if isOver { return false }
        monitor?.request(self, didCreateInitialRequest: head)
        return true
    }

    /// The interceptors turned `initial` into `adapted` for the next attempt.
    func didAdaptInitialRequest(_ initial: RequestHead, to adapted: URLRequest) {
        // A monitor's argument is built only when there is a monitor.
        monitor?.request(self, didAdaptInitialRequest: initial.urlRequest, to: adapted)
    }

    /// An adapter threw; the retriers decide whether to try again (a token refresh may fix it).
    func didFailToAdaptURLRequest(_ initial: RequestHead, withError error: CourierError) {
        // The unadapted request is the last one made, as in Alamofire: `response.request` shows it,
        // and a cURL handler still waiting describes it (the request may end here).
        let cURL = mutableState.withLock { state -> (queue: DispatchQueue, handler: @Sendable (String) -> Void)? in
            guard !state.machine.hasFinished else { return nil }
            state.requests.append(initial)
            defer { state.hooks.cURL = nil }
            return state.hooks.cURL
        }
        if let (queue, handler) = cURL {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        monitor?.request(self, didFailToAdaptURLRequest: initial.urlRequest, withError: error)
        retryOrFinish(error: error)
    }

    /// Records the request built for the next attempt, and returns how the attempt treats
    /// redirects (this request's settings, else `session`'s).
    /// Returns `nil`, recording nothing, if the request ended meanwhile (while it was being
    /// adapted): no attempt is made then.
    func didCreateRequest(_ head: inout RequestHead, session: Session, setsOwnCookie: Bool) -> RedirectSettings? {
        var hooks = RequestHooks()
        let settings = mutableState.withLock { state -> RedirectSettings? in
            guard !state.machine.hasFinished else { return nil }
            // Taken with the head's recording: a hook added at the same moment either sees the
            // head when added or is called here, never both.
            hooks.urlRequest = state.hooks.urlRequest
            hooks.cURL = state.hooks.cURL
            state.hooks.cURL = nil
            head.cacheMode = state.cacheMode
            head.cacheDecision = cacheDecision(state.cachedResponseHandler ?? session.cachedResponseHandler)
            state.requests.append(head)
            let storage = session.configuration.credentialStorage
            // The attempt's own first request, as adapted: an adapter (the caller's code) that
            // moves the request to another host takes its credential there too.
            let origin = head.url
            return RedirectSettings(
                handler: state.redirectHandler ?? session.redirectHandler,
                limit: state.redirectLimit ?? session.configuration.redirectLimit,
                allowsInsecureRedirects: state.allowsInsecureRedirects
                    ?? session.configuration.allowsInsecureRedirects,
                challengeResponder: state.credential == nil && storage == nil
                    ? nil
                    : ChallengeResponder(
                        credential: state.credential.map { ($0, origin) },
                        storage: storage,
                        nonceCounts: session.digestNonceCounts
                    ),
                cookies: session.configuration.cookieStorage,
                setsOwnCookie: setsOwnCookie
            )
        }
        guard settings != nil else { return nil }
        monitor?.request(self, didCreateRequest: head)
        callCreationHooks(hooks, for: head)
        return settings
    }

    /// A step of the request's lifecycle, which monitors and notifications hear of.
    enum LifecycleEvent {
        case resume, suspend, cancel, finish, resumeTask, suspendTask, cancelTask
    }

    /// Queues the lifecycle notification `name`, if the session posts them. Called under the
    /// request's lock, with the change it reports, so that a request's notifications are posted
    /// in the order its changes happened (the poster's own lock is taken inside, never around).
    func post(_ name: Notification.Name) {
        notifications?.post(name, self)
    }

    /// Tells the monitor of `event` (the notification was queued with the change, by ``post(_:)``).
    func announce(_ event: LifecycleEvent) {
        if let monitor {
            switch event {
            case .resume: monitor.requestDidResume(self)
            case .suspend: monitor.requestDidSuspend(self)
            case .cancel: monitor.requestDidCancel(self)
            case .finish: monitor.requestDidFinish(self)
            case .resumeTask: monitor.requestDidResumeTask(self)
            case .suspendTask: monitor.requestDidSuspendTask(self)
            case .cancelTask: monitor.requestDidCancelTask(self)
            }
        }
    }

    /// Building the URLRequest failed; the request finishes with `error`.
    func didFailToCreateURLRequest(with error: CourierError) {
        monitor?.request(self, didFailToCreateURLRequestWithError: error)
        finish(error: error)
    }

    /// The transport made `task` for `head`, reporting to `attempt`: run it, hold it, or
    /// cancel it, as the state says.
    func didCreateTask(_ task: any TransportTask, for head: RequestHead, attempt: Attempt) {
        // Read before the lock, which it takes once a monitor was added to the request.
        let monitor = monitor
        let (action, snapshot) = mutableState.withLock { state -> (StateMachine.TaskAction, TaskSnapshot?) in
            let action = state.machine.taskCreated()
            guard action != .cancel else { return (action, nil) }
            state.attempt = attempt
            state.task = task
            state.performedRequests.append(head)
            // Queued with the change it reports, so that a cancel finishing the request after
            // this lock is told after it, never before: monitors keep what they know of a request
            // from its first attempt to its finish. Every monitor a request holds is a
            // `CompositeEventMonitor`, which only queues the event: nothing of a user's runs here.
            monitor?.request(self, didStartAttemptWith: head)
            if action == .resume { post(.didResumeTask) }
            return (action, state.taskSnapshot(unlessAt: nil))
        }
        switch action {
        case .resume:
            announce(.resumeTask)
            // Follows the state as it is by now: a suspend() since the decision found no task to pause.
            applyStateToTask(startingWith: snapshot)
        case .leaveSuspended:
            break
        case .cancel:
            task.cancel()
        }
    }

    /// Tells the monitors that asked for them (``EventMonitor/receivesBodyPieces``) of a piece of
    /// `byteCount` body bytes; for the rest, one check of a constant.
    func announceBodyPiece(_ byteCount: Int) {
        guard let monitor, monitor.receivesBodyPieces else { return }
        monitor.request(self, didReceiveBodyPieceOf: byteCount)
    }

    /// Records the end of `attempt` with its `metrics`; returns whether it was the current
    /// attempt and has ended (no attempt is current until the next, so late events of this one
    /// are ignored).
    func recordAttemptCompletion(of attempt: Attempt, metrics: RequestMetrics) -> Bool {
        mutableState.withLock { state in
            guard state.attempt === attempt else { return false }
            state.metrics.append(metrics)
            guard state.machine.attemptCompleted() == .complete else { return false }
            state.attempt = nil
            state.task = nil
            post(.didCompleteTask)
            return true
        }
    }

    // MARK: - Transport events (from the current ``Attempt``; overridden by each kind of request)

    /// The attempt's response head arrived.
    func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive head: ResponseHead) {}

    /// A piece of the attempt's response body arrived.
    func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive data: Data) {}

    /// The attempt ended, with `error` if it failed.
    func attempt(
        _ attempt: Attempt,
        of task: any TransportTask,
        didCompleteWith error: URLError?,
        metrics: RequestMetrics
    ) {}

    // MARK: - What each kind of request decides for itself

    /// Commits the request to succeeding, unless it has finished: from now on `cancel()` and the
    /// deadline do nothing, so a step that cannot be undone (moving a download over its
    /// destination) is never reported as cancelled. Returns `false` if the request had finished.
    func beginCommitting() -> Bool {
        mutableState.withLock { $0.machine.beginCommitting() }
    }

    /// Whether the latest attempt received no body bytes (validators let an empty body pass).
    func receivedNoBody(_ input: ValidationInput) -> Bool { input.bytesReceived == 0 }

    /// The request an attempt sends, from the adapted one: a download adds its `Range`.
    func finalizing(_ head: RequestHead) -> RequestHead { head }

    /// A retry is about to start its attempt, the previous attempt's state cleared: for what a
    /// subclass keeps of its own (a download lets go of a file it had put in place).
    func didPrepareRetry() {}

    /// Whether another attempt could be made at all; `false` for a body that can be sent only once.
    var canRetry: Bool { true }

    /// The last attempt succeeded (and passed validation): finishes the request. A data request
    /// first offers its serializers' failures to the retriers.
    func finishSucceeded() {
        finish()
    }

    /// Finishes the request without an error, in one look at the state, unless `diversion`
    /// (run under the lock) claims the finish by returning a value, which is returned; `nil`
    /// once finished (or if it had finished already).
    func finishWithoutError<Diverted>(unless diversion: (inout MutableState) -> Diverted?) -> Diverted? {
        var diverted: Diverted?
        guard
            let finishing = mutableState.withLock({ state -> Finishing? in
                if let claimed = diversion(&state) {
                    diverted = claimed
                    return nil
                }
                return takeFinishHandlers(&state, error: nil)
            })
        else { return diverted }
        complete(consume finishing, stopsWork: false, isCancellation: false)
        return nil
    }

    // MARK: - Deadline

    /// Arms the deadline: `seconds` from now on `clock`, the request fails with
    /// `URLError(.timedOut)` unless it has finished. Does nothing once armed.
    func armDeadline(after seconds: TimeInterval, clock: SessionClock) {
        guard seconds.isFinite, seconds >= 0 else { return }
        let deadline = clock.now() + .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
        let isNew = mutableState.withLock { state -> Bool in
            state.machine.armDeadline(at: deadline)
        }
        guard isNew else { return }
        let task = Task { [weak self] in
            try? await clock.sleep(deadline)
            guard !Task.isCancelled else { return }
            self?.expire(after: seconds)
        }
        let isOver = mutableState.withLock { state -> Bool in
            if state.machine.hasFinished { return true }
            state.deadlineTask = task
            return false
        }
        // After the lock: cancelling runs the clock's cancellation handler, which may be anyone's code.
        if isOver { task.cancel() }
    }

    /// The deadline passed: stops the transfer and any pending retry, and fails with a timeout.
    private func expire(after seconds: TimeInterval) {
        abandon(
            dueTo: .transportFailed(
                URLError(
                    .timedOut,
                    userInfo: [NSLocalizedDescriptionKey: "The request's deadline of \(seconds) s passed."]
                )
            )
        )
    }

    /// Stops the transfer and any pending retry and fails with `error`: like a cancel, but the
    /// request ends `finished`, since nobody cancelled it (its deadline passed, its session was
    /// invalidated). Does nothing once it has finished, or while a download commits its file.
    func abandon(dueTo error: CourierError) {
        guard
            let outcome = mutableState.withLock({ state -> Finishing? in
                switch state.machine.expire() {
                case .none: return nil
                case .cancelTaskAndFinish: return takeFinishHandlers(&state, error: error)
                // A download whose file is in place: it succeeded; the stop ends the retry decision.
                case .finishCommitted: return takeFinishHandlers(&state, error: nil)
                }
            })
        else { return }
        complete(consume outcome, stopsWork: true, isCancellation: false)
    }

    // MARK: - Finishing

    /// Validators run when an attempt completes without a transport error; the first failure wins.
    func runValidators(_ taken: (validators: [Validator], input: ValidationInput)? = nil) -> CourierError? {
        let (validators, input) = taken ?? mutableState.withLock { $0.validationWork }
        for validator in validators {
            if let error = validator.check(self, input) { return error }
        }
        return nil
    }

    /// What validators read of the latest attempt, taken in one lock with the validators.
    struct ValidationInput: Sendable {
        let head: ResponseHead?
        let request: RequestHead?
        let bytesReceived: Int64
    }

    /// Takes an attempt's validation and runs it in an awaiting task, returning `true`, or returns
    /// `false` when that task is not waiting now (the validation then runs on the serialization queue).
    typealias ValidationRunner = @Sendable (_ validation: @escaping @Sendable () -> Void) -> Bool

    /// A validator, and whether it is Courier's own check that may run on the transport's thread.
    struct Validator: Sendable {
        let runsInline: Bool
        let check: @Sendable (Request, ValidationInput) -> CourierError?
    }

    /// Ends the request (once): records `error`, then runs every waiting handler. Returns
    /// whether this call ended it (`false` if it had ended already).
    @discardableResult
    func finish(error: CourierError? = nil) -> Bool {
        guard let finishing = mutableState.withLock({ takeFinishHandlers(&$0, error: error) }) else {
            return false
        }
        complete(consume finishing, stopsWork: false, isCancellation: false)
        return true
    }

    /// After the lock: stops the work a cancel or the deadline cut short (cancelling a task runs
    /// its cancellation handlers at once, so never under the lock), lets go of everything else
    /// the request held, then tells the monitor and runs the handlers. The session is let go
    /// first, so that a caller whom a handler resumes, and who then drops the session, finds
    /// nothing else holding it.
    private func complete(_ finishing: consuming Finishing, stopsWork: Bool, isCancellation: Bool) {
        let handlers = finishing.handlers
        let progress = finishing.progress
        let cancelsTask = isCancellation && finishing.task != nil
        if stopsWork {
            finishing.pendingWork?.cancel()
            finishing.task?.cancel()
        }
        // However the request ended, nothing is left waiting out a delay or a deadline for it.
        finishing.retryWait?.cancel()
        finishing.deadlineTask?.cancel()
        // A suspended request let go of its session; the session may still be there.
        (finishing.session ?? weakSession)?.requestDidFinish(self)
        _ = consume finishing
        // In Alamofire's order: the request, then its task.
        if isCancellation { announce(.cancel) }
        if cancelsTask { announce(.cancelTask) }
        announce(.finish)
        if let progress { finishProgress(progress) }
        handlers.forEach { $0() }
    }

    /// What finishing takes out of the state: the handlers to run, and whatever the request held
    /// while it ran. All of it is let go after the lock is released: letting go of the session
    /// may end it, and a session that ends cancels its requests, which takes their locks.
    private struct Finishing {
        var handlers: [@Sendable () -> Void]
        var task: (any TransportTask)?
        /// An adaptation or retry decision under way: cancelled by a cancel or the deadline (a
        /// request finishing otherwise has none).
        var pendingWork: Task<Void, Never>?
        var retryWait: Task<Void, Never>?
        var session: Session?
        var attempt: Attempt?
        var deadlineTask: Task<Void, Never>?
        var validators: [Validator]
        var validationRunners: [ValidationRunner]
        var headValidator: (queue: DispatchQueue, validate: @Sendable (HTTPURLResponse) throws -> Void)?
        var hooks: RequestHooks
        /// The last progress update, delivered before any handler runs.
        var progress: FinalProgress?
    }

    /// Under the lock: marks the request finished, records `error` (the first finisher's error
    /// wins, and a cancellation's replaces a failed attempt's), and hands back the waiting
    /// handlers, or `nil` if it had finished already. Validators are dropped, since they are done
    /// and may capture the request (progress listeners go in ``takeFinalProgress(_:)``).
    private func takeFinishHandlers(
        _ state: inout MutableState,
        error: CourierError?,
        isCancellation: Bool = false
    ) -> Finishing? {
        guard state.machine.finish() else { return nil }
        // In Alamofire's order: the request, its task, the task's end, then the end.
        if isCancellation {
            post(.didCancel)
            if state.task != nil {
                post(.didCancelTask)
                post(.didCompleteTask)
            }
        }
        post(.didFinish)
        if let error { state.error = error }
        let finishing = Finishing(
            handlers: state.finishHandlers,
            task: state.task,
            pendingWork: state.pendingWork,
            retryWait: state.retryWait,
            session: state.session,
            attempt: state.attempt,
            deadlineTask: state.deadlineTask,
            validators: state.validators,
            validationRunners: state.validationRunners,
            headValidator: state.headValidator,
            hooks: state.hooks,
            progress: Self.takeFinalProgress(&state)
        )
        state.finishHandlers = []
        state.pendingWork = nil
        state.retryWait = nil
        state.session = nil
        state.attempt = nil
        state.task = nil
        state.deadlineTask = nil
        state.validators = []
        state.validationRunners = []
        state.headValidator = nil
        state.hooks = RequestHooks()
        // They may hold the request: let go of them with the rest.
        state.addedInterceptors = []
        state.serializerChecks = []
        return finishing
    }

    /// Runs `handler` once the request has finished: now if it has, else when it does. With
    /// `resumingRequest` (response handlers), resumes an initialized request when the session
    /// starts requests immediately; bookkeeping handlers pass `false`. An awaiting handler passes
    /// a `validationRunner`, so that the validator closures added so far run in its task.
    func appendFinishHandler(
        resumingRequest: Bool = true,
        validationRunner: ValidationRunner? = nil,
        _ handler: @escaping @Sendable () -> Void
    ) {
        let (runNow, shouldResume, ownChoice) = mutableState.withLock { state -> (Bool, Bool, Bool?) in
            if state.machine.hasFinished { return (true, false, nil) }
            state.finishHandlers.append(handler)
            // Only when a validator needs it: most requests validate with Courier's own checks.
            if let validationRunner, state.validators.contains(where: { !$0.runsInline }) {
                state.validationRunners.append(validationRunner)
            }
            return (false, state.machine.state == .initialized, state.shouldAutomaticallyResume)
        }
        if runNow { handler() }
        guard resumingRequest, shouldResume else { return }
        if ownChoice ?? weakSession?.configuration.startRequestsImmediately ?? false { resume() }
    }

    /// Whether this request starts when its first response handler is added: `true` or `false`
    /// as given when it was made (Alamofire 5.11's `shouldAutomaticallyResume:`), or `nil` to
    /// follow the session's ``Session/Configuration-swift.struct/startRequestsImmediately``.
    public var shouldAutomaticallyResume: Bool? { mutableState.withLock { $0.shouldAutomaticallyResume } }

    /// Records a factory's `shouldAutomaticallyResume:` argument; nothing to record for `nil`.
    func resumingAutomatically(_ choice: Bool?) -> Self {
        if let choice { mutableState.withLock { $0.shouldAutomaticallyResume = choice } }
        return self
    }

    // MARK: - Describing

    /// The latest request as a `curl` command, in Alamofire's form (`-X`, `-b` for cookies, `-H`
    /// for each header, `-d` for the body, each value in double quotes), with credentials
    /// (`Authorization`, `Proxy-Authorization`, cookies) redacted unless `includingCredentials`.
    ///
    /// Unlike Alamofire's, the quoting is safe to paste into a shell: backslashes, double quotes,
    /// dollar signs and backticks are escaped, and `!` (which an interactive shell expands from its history even in double
    /// quotes) is written in single quotes, so a value a server or user chose cannot run a command.
    public func cURLDescription(includingCredentials: Bool = false) -> String {
        // Nothing is sent for a custom request: its delegate's own description says what runs.
        if let customOperation { return "$ " + customOperation.original.requestDescription }
        guard let request = lastRequest, let url = request.url else { return "$ curl (no request built)" }
        var components = ["$ curl -v", "-X \(Self.shellQuoted(request.httpMethod ?? "GET"))"]
        let headers = HTTPHeaders((request.allHTTPHeaderFields ?? [:]))
        if let cookie = headers.value(for: "Cookie") {
            components.append("-b \(Self.shellQuoted(includingCredentials ? cookie : "***"))")
        }
        for header in headers.sorted() where header.name.lowercased() != "cookie" {
            let value = header.isSensitive && !includingCredentials ? "***" : header.value
            components.append("-H \(Self.shellQuoted("\(header.name): \(value)"))")
        }
        if let body = request.httpBody, !body.isEmpty {
            components.append("-d \(Self.shellQuoted(String(decoding: body, as: UTF8.self)))")
        }
        components.append(Self.shellQuoted(url.absoluteString))
        return components.joined(separator: " \\\n\t")
    }

    /// `text` in double quotes, with what a shell expands there escaped: `\\ " $` and backquote
    /// escaped, `!` in single quotes (history expansion), and control characters as `$'\xNN'`
    /// (a pasted escape sequence must not reach the terminal). Read by Unicode scalar, not by
    /// `Character`: a combining mark after a quote must not hide the quote.
    static func shellQuoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "!":
                quoted += #""'!'""#
            case "\\", "\"", "$", "`":
                quoted += "\\" + String(scalar)
            case "\t", "\n":
                quoted.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                quoted += "\"$'\\x" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 2) + "'\""
            default:
                quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

extension Request: Equatable, Hashable {
    /// Requests are equal when their ids are.
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs.id == rhs.id }

    /// Hashes the id.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension Request: CustomStringConvertible {
    /// The method, URL and, once known, status code, e.g. `GET http://127.0.0.1:8080/get (200)`.
    public var description: String {
        let status = responseHead.map { " (\($0.statusCode))" } ?? ""
        if let customOperation { return customOperation.original.requestDescription + status }
        guard let head = requestHead else { return "No request created yet." }
        return "\(head.method.rawValue) \(head.url.absoluteString)\(status)"
    }
}

/// The session a request belongs to, as the request shows it (``Request/delegate``): the only
/// conformer is ``Session``. Starting attempts and deciding retries are the session's own
/// business and are not part of the protocol.
public protocol RequestDelegate: AnyObject, Sendable {
    /// Whether adding a response handler starts an initialized request.
    var startsRequestsImmediately: Bool { get }
}

extension DispatchQueue {
    /// Where Courier calls handlers unless told otherwise: the main queue on Apple platforms, and
    /// on Linux (where nothing runs the main queue in a server or a tool) a Courier-owned serial queue.
    public static var courierCallbacks: DispatchQueue {
        #if canImport(Darwin)
        return .main
        #else
        return courierLinuxCallbacks
        #endif
    }
}

private let courierLinuxCallbacks = DispatchQueue(label: "Courier.callbacks")

extension String {
    /// The string with `0`s before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
