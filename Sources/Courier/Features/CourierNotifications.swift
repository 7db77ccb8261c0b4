import Foundation

extension Request {
    /// Posted when a request is resumed (started, or continued after a suspend).
    public static let didResumeNotification = Notification.Name("org.courier.notification.name.request.didResume")
    /// Posted when a request is suspended.
    public static let didSuspendNotification = Notification.Name("org.courier.notification.name.request.didSuspend")
    /// Posted when a request is cancelled.
    public static let didCancelNotification = Notification.Name("org.courier.notification.name.request.didCancel")
    /// Posted when a request finishes, however it ended (after ``didCancelNotification`` for a cancel).
    public static let didFinishNotification = Notification.Name("org.courier.notification.name.request.didFinish")
    /// Posted when an attempt's transfer starts, and when it continues after a suspend
    /// (Alamofire's URLSessionTask was resumed).
    public static let didResumeTaskNotification = Notification.Name(
        "org.courier.notification.name.request.didResumeTask"
    )
    /// Posted when an attempt's transfer is paused by ``suspend()``.
    public static let didSuspendTaskNotification = Notification.Name(
        "org.courier.notification.name.request.didSuspendTask"
    )
    /// Posted when an attempt's transfer is stopped by ``cancel()``.
    public static let didCancelTaskNotification = Notification.Name(
        "org.courier.notification.name.request.didCancelTask"
    )
    /// Posted when an attempt ends, with or without an error.
    public static let didCompleteTaskNotification = Notification.Name(
        "org.courier.notification.name.request.didCompleteTask"
    )

    /// The `userInfo` key under which a notification carries its request.
    static let notificationRequestKey = "org.courier.notification.key.request"
}

extension Notification {
    /// The request a Courier notification is about, or `nil` for another notification.
    public var request: Request? { userInfo?[Request.notificationRequestKey] as? Request }
}

extension CourierExtension where ExtendedType == Notification {
    /// The request a Courier notification is about (`notification.courier.request`), or `nil`.
    public var request: Request? { type.request }
}

/// Posts a request's lifecycle as `NotificationCenter` notifications (``Request/didResumeNotification``
/// and the others), as Alamofire's `AlamofireNotifications`. Each notification's `object` is the
/// request, and so is ``Foundation/Notification/request``.
///
/// Every session posts them unless ``Session/Configuration-swift.struct/postsNotifications`` is
/// off; add a monitor of your own only to post to another center. Notifications are posted in
/// order on ``queue``, never on a transport's thread, so a slow observer delays other observers
/// but no request. Events close together are posted together: one wake-up of the queue for a
/// burst, not one per event.
///
/// ```swift
/// NotificationCenter.default.addObserver(forName: Request.didFinishNotification, object: nil, queue: nil) {
///     print("finished:", $0.courier.request?.description ?? "")
/// }
/// ```
public final class CourierNotifications: EventMonitor {
    /// The queue notifications are posted on.
    public let queue: DispatchQueue
    /// Where they are posted.
    public let center: NotificationCenter
    /// What waits to be posted, and whether a drain of it is scheduled on ``queue``.
    private let pending = Protected((items: [(Notification.Name, Request)](), isScheduled: false))

    /// The monitor sessions share to post to the default center.
    static let shared = CourierNotifications()

    /// A monitor posting to `center` on `queue` (a serial queue of its own by default).
    public init(
        center: NotificationCenter = .default,
        queue: DispatchQueue = DispatchQueue(label: "Courier.Notifications")
    ) {
        self.center = center
        self.queue = queue
    }

    /// Posts ``Request/didResumeNotification``.
    public func requestDidResume(_ request: Request) { post(Request.didResumeNotification, request) }
    /// Posts ``Request/didSuspendNotification``.
    public func requestDidSuspend(_ request: Request) { post(Request.didSuspendNotification, request) }
    /// Posts ``Request/didCancelNotification``.
    public func requestDidCancel(_ request: Request) { post(Request.didCancelNotification, request) }
    /// Posts ``Request/didFinishNotification``.
    public func requestDidFinish(_ request: Request) { post(Request.didFinishNotification, request) }
    /// Posts ``Request/didResumeTaskNotification``.
    public func requestDidResumeTask(_ request: Request) { post(Request.didResumeTaskNotification, request) }
    /// Posts ``Request/didSuspendTaskNotification``.
    public func requestDidSuspendTask(_ request: Request) { post(Request.didSuspendTaskNotification, request) }
    /// Posts ``Request/didCancelTaskNotification``.
    public func requestDidCancelTask(_ request: Request) { post(Request.didCancelTaskNotification, request) }
    /// Posts ``Request/didCompleteTaskNotification``.
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        post(Request.didCompleteTaskNotification, request)
    }

    /// Queues `name` for `request`; the first of a burst schedules the drain.
    func post(_ name: Notification.Name, _ request: Request) {
        let schedules = pending.withLock { pending -> Bool in
            pending.items.append((name, request))
            defer { pending.isScheduled = true }
            return !pending.isScheduled
        }
        if schedules { queue.async { self.drain() } }
    }

    /// Posts what is queued, in order, until nothing is left.
    private func drain() {
        while true {
            let items = pending.withLock { pending -> [(Notification.Name, Request)] in
                if pending.items.isEmpty { pending.isScheduled = false }
                defer { pending.items.removeAll(keepingCapacity: true) }
                return pending.items
            }
            guard !items.isEmpty else { return }
            for (name, request) in items {
                center.post(name: name, object: request, userInfo: [Request.notificationRequestKey: request])
            }
        }
    }
}
