import AsyncHTTPClient
import Logging
import PostgresNIO
import ServiceLifecycle
import ServiceRuntime

/// Turns queued pushes into requests to the providers: expands waiting jobs into deliveries,
/// leases a batch of due deliveries, sends them with at most ``concurrency`` in flight (each
/// app's credentials opened once per batch), and records each outcome.
struct PushSender: Sendable {
    let queue: PushQueue
    let credentials: PushCredentialStore
    let apns: APNsClient
    let fcm: FCMClient
    let policy: PushQueue.RetryPolicy
    let logger: Logger
    /// Requests in flight at most.
    var concurrency = 16
    /// How long a sender holds a leased delivery before another may take it over (ms).
    var lease: Int64 = 60_000

    /// One round: up to 20 expansion steps, then one leased batch sent; answers how many
    /// deliveries it handled (a full batch means more may be due).
    func round(now: Int64) async throws -> Int {
        for _ in 0..<20 where try await !queue.expand(now: now) { break }
        let claimed = try await queue.claim(concurrency * 4, now: now, lease: lease)
        guard !claimed.isEmpty else { return 0 }
        let keys = try await self.keys(for: Set(claimed.map(\.app)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, delivery) in claimed.enumerated() {
                if index >= concurrency { try await group.next() }
                group.addTask {
                    let outcome = await send(delivery, keys: keys[delivery.app] ?? AppKeys())
                    try await queue.record(delivery, outcome, now: MessageStore.now(), policy: policy)
                }
            }
            try await group.waitForAll()
        }
        return claimed.count
    }

    /// An app's credentials for one batch, or why each is unusable.
    struct AppKeys: Sendable {
        var apns: Result<APNsCredential, PushFailure> = .failure(PushFailure("No APNs credential is set"))
        var fcm: Result<FCMCredential, PushFailure> = .failure(PushFailure("No FCM service account is set"))
    }

    /// Why a push cannot be sent.
    struct PushFailure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private func keys(for apps: Set<String>) async throws -> [String: AppKeys] {
        var keys: [String: AppKeys] = [:]
        for app in apps {
            var appKeys = AppKeys()
            do {
                if let credential = try await credentials.apns(app: app) { appKeys.apns = .success(credential) }
                if let account = try await credentials.fcm(app: app) { appKeys.fcm = .success(account) }
            } catch let error as PSQLError {
                throw error
            } catch {
                appKeys = AppKeys(
                    apns: .failure(PushFailure("The credentials do not open: \(error)")),
                    fcm: .failure(PushFailure("The credentials do not open")))
            }
            keys[app] = appKeys
        }
        return keys
    }

    private func send(_ delivery: PushQueue.Claimed, keys: AppKeys) async -> PushOutcome {
        switch DeviceRegistration.OS(rawValue: delivery.os) {
        case .ios?:
            guard case .success(let credential) = keys.apns else { return .misconfigured(keys.apns.failureReason) }
            let notification = PushPayloads.apns(
                message: delivery.message, headers: delivery.headers, messageId: delivery.messageId,
                deviceToken: delivery.deviceToken,
                now: MessageStore.now())
            return await apns.send(notification, with: credential)
        case .android?:
            guard case .success(let account) = keys.fcm else { return .misconfigured(keys.fcm.failureReason) }
            let message = PushPayloads.fcm(
                message: delivery.message, headers: delivery.headers, messageId: delivery.messageId,
                deviceToken: delivery.deviceToken)
            return await fcm.send(message, with: account)
        default:
            return .rejected("Push to \(delivery.os) devices is not supported")
        }
    }
}

extension Result where Failure == PushSender.PushFailure {
    var failureReason: String {
        if case .failure(let failure) = self { failure.reason } else { "" }
    }
}

/// The push sender as a background service: it owns the HTTP client for the providers for as
/// long as it runs, and sends every 250 ms until graceful shutdown.
struct PushDeliveryService: Service {
    let settings: PushSettings
    let queue: PushQueue
    let credentials: PushCredentialStore
    let logger: Logger

    func run() async throws {
        let http = try settings.httpClient()
        let sender = PushSender(
            queue: queue, credentials: credentials,
            apns: APNsClient(http: http, settings: settings, tokens: APNsTokens()),
            fcm: FCMClient(http: http, settings: settings, tokens: FCMTokens()), policy: settings.retry, logger: logger)
        await repeatUntilShutdown(every: .milliseconds(250), logger: logger, failure: "pushes not delivered") {
            while try await sender.round(now: MessageStore.now()) >= sender.concurrency * 4 {}
        }
        try await http.shutdown()
    }
}
