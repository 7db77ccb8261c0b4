import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's lifecycle notifications: posted by every session unless turned off, each carrying
/// its request as `object`, `notification.request` and `notification.courier.request`.
@Suite struct NotificationTests {
    /// Records the names of the Courier notifications posted about one request, in order.
    // @unchecked Sendable: `observer` is set once, in init, and read only in deinit.
    private final class Recorder: @unchecked Sendable {
        let names = Mailbox<String>()
        /// Whether each notification carried the request, in order.
        let carried = Mailbox<Bool>()
        private let observer: any NSObjectProtocol
        private let center: NotificationCenter

        init(_ request: Request, center: NotificationCenter = .default) {
            // Registered for every name, so it names none: the sessions must be told to post.
            CourierNotifications.startPosting()
            self.center = center
            observer = center.addObserver(forName: nil, object: request, queue: nil) { [names, carried] note in
                guard note.name.rawValue.hasPrefix("org.courier.") else { return }
                carried.put(note.courier.request === request && note.request === request)
                names.put(
                    note.name.rawValue.replacingOccurrences(of: "org.courier.notification.name.request.", with: "")
                )
            }
        }

        var carriedRequest: Bool { carried.values.allSatisfy { $0 } && carried.count > 0 }

        /// The first `count` names, once posted.
        func first(_ count: Int) async -> [String] {
            _ = await names.value(at: count - 1)
            return Array(names.values.prefix(count))
        }

        deinit {
            center.removeObserver(observer)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestPostsItsLifecycleInOrder(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // Before the request is made: one made earlier posts nothing.
            CourierNotifications.startPosting()
            let session = transport.makeSession()
            let request = session.request(server.url("/get"), shouldAutomaticallyResume: false)
            let recorder = Recorder(request)
            request.resume()
            _ = await value(within: hangLimit) { await request.serializingData().result }
            #expect(await recorder.first(4) == ["didResume", "didResumeTask", "didCompleteTask", "didFinish"])
            #expect(recorder.carriedRequest)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func suspendResumeAndCancelArePostedForTheRequestAndItsTask(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            CourierNotifications.startPosting()
            let session = transport.makeSession()
            let request = session.request(server.url("/fault/hang?seconds=60"), shouldAutomaticallyResume: false)
            let recorder = Recorder(request)
            request.resume()
            try await server.waitForRequests(1)
            request.suspend()
            request.resume()
            request.cancel()
            let names = await recorder.first(10)
            #expect(
                names == [
                    "didResume", "didResumeTask", "didSuspend", "didSuspendTask", "didResume", "didResumeTask",
                    "didCancel", "didCancelTask", "didCompleteTask", "didFinish",
                ]
            )
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSessionWithNotificationsOffPostsNone(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            CourierNotifications.startPosting()
            let silentSession = transport.makeSession { $0.postsNotifications = false }
            let silent = silentSession.request(server.url("/get"), shouldAutomaticallyResume: false)
            let silentRecorder = Recorder(silent)
            silent.resume()
            _ = await value(within: hangLimit) { await silent.serializingData().result }
            // Sessions share one poster, which posts in order: once a later request's finish is
            // posted, anything the silent one had queued has been posted too.
            let session = transport.makeSession()
            let later = session.request(server.url("/get"), shouldAutomaticallyResume: false)
            let laterRecorder = Recorder(later)
            later.resume()
            #expect(await laterRecorder.first(4).last == "didFinish")
            #expect(silentRecorder.names.count == 0)
            await silentSession.invalidate()
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMonitorOfYourOwnPostsToTheCenterYouGive(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let center = NotificationCenter()
            let session = transport.makeSession(
                { $0.postsNotifications = false },
                eventMonitors: [CourierNotifications(center: center)]
            )
            let request = session.request(server.url("/status/503"), shouldAutomaticallyResume: false)
            let recorder = Recorder(request, center: center)
            request.resume()
            _ = await value(within: hangLimit) { await request.serializingData().result }
            #expect(await recorder.first(4) == ["didResume", "didResumeTask", "didCompleteTask", "didFinish"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theSharedPosterWaitsUntilANameIsRead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let center = NotificationCenter()
            let poster = CourierNotifications(center: center, postsOnceObserved: true)
            let session = transport.makeSession()
            let request = session.request(server.url("/get"), shouldAutomaticallyResume: false)
            let recorder = Recorder(request, center: center)
            poster.post(.didResume, request)
            // What reading a name does for the shared poster, done to this one.
            poster.startPosting()
            poster.post(.didFinish, request)
            // Posted in order: once the second is seen, the first would have been.
            #expect(await recorder.first(1) == ["didFinish"])
            // Reading a public name starts the shared poster.
            _ = Request.didFinishNotification
            #expect(CourierNotifications.shared.isPosting)
            await session.invalidate()
        }
    }
}
