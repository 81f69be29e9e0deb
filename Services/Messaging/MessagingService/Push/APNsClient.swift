import AsyncHTTPClient
import DataEngine
import Foundation
import NIOCore
import NIOHTTP1

/// One notification for one device, as APNs takes it.
struct APNsNotification: Sendable {
    let deviceToken: String
    /// `{"aps": {…}, custom keys…}`.
    let payload: JSONObject
    /// A silent push (`content-available`): push type `background`, priority 5.
    let background: Bool
    /// Until when APNs keeps trying (epoch seconds).
    let expiration: Int64
    /// The `apns-id`: a lower-case UUID.
    let id: String

    /// APNs's payload limit, in bytes.
    static let payloadLimit = 4_096
}

/// What became of one push to one device.
enum PushOutcome: Sendable, Equatable {
    /// Accepted; the provider's id for it.
    case delivered(String)
    /// Worth another try later (throttled, the provider unavailable, the connection lost), after
    /// at least `after` when the provider said.
    case retry(String, after: Duration?)
    /// The device token is no longer valid: the registration goes, unless it was renewed after
    /// `since` (epoch ms, when the provider says).
    case unregistered(String, since: Int64?)
    /// Refused for good (a payload or header the provider will never take).
    case rejected(String)
    /// The app's credential does not work: nothing for it will until it is replaced.
    case misconfigured(String)
}

/// Sends notifications to APNs over HTTP/2 with token-based authentication (push-delivery §1),
/// one request per device on the shared client's connections.
struct APNsClient: Sendable {
    let http: HTTPClient
    let settings: PushSettings
    let tokens: APNsTokens

    /// Sends `notification` with `credential`; a token APNs calls expired is renewed and the
    /// notification sent once more.
    func send(_ notification: APNsNotification, with credential: APNsCredential) async -> PushOutcome {
        let body = JSONValue.object(notification.payload).jsonText
        guard body.utf8.count <= APNsNotification.payloadLimit else { return .rejected("PayloadTooLarge") }
        let first = await attempt(notification, body: body, credential: credential)
        guard case .expired(let token) = first, await tokens.expire(token, for: credential) else {
            return first.outcome
        }
        return await attempt(notification, body: body, credential: credential).outcome
    }

    /// One request's outcome, or that its provider token was called expired.
    private enum Attempt {
        case done(PushOutcome)
        case expired(String)

        var outcome: PushOutcome {
            switch self {
            case .done(let outcome): outcome
            case .expired: .misconfigured("ExpiredProviderToken")
            }
        }
    }

    private func attempt(_ notification: APNsNotification, body: String, credential: APNsCredential) async -> Attempt {
        let token: String
        do {
            token = try await tokens.token(for: credential)
        } catch {
            return .done(.misconfigured("The APNs key cannot sign"))
        }
        var request = HTTPClientRequest(
            url: settings.apnsBase(production: credential.production) + "/3/device/" + notification.deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + token)
        request.headers.add(name: "apns-topic", value: credential.bundleId)
        request.headers.add(name: "apns-push-type", value: notification.background ? "background" : "alert")
        request.headers.add(name: "apns-priority", value: notification.background ? "5" : "10")
        request.headers.add(name: "apns-expiration", value: String(notification.expiration))
        request.headers.add(name: "apns-id", value: notification.id)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let answer = try await response.body.collect(upTo: 64 * 1024)
            return Self.classify(response.status, response.headers, answer: answer, token: token)
        } catch {
            return .done(.retry("APNs could not be reached: \(error)", after: nil))
        }
    }

    /// Apple's status and reason as an outcome (push-delivery §1.6).
    private static func classify(
        _ status: HTTPResponseStatus, _ headers: HTTPHeaders, answer: ByteBuffer, token: String
    ) -> Attempt {
        if status == .ok { return .done(.delivered(headers.first(name: "apns-id") ?? "")) }
        let object = (try? JSONParser.parse(Array(answer.readableBytesView)))?.object
        let reason = object?["reason"]?.string ?? "HTTP \(status.code)"
        switch (status.code, reason) {
        case (403, "ExpiredProviderToken"): return .expired(token)
        case (403, _): return .done(.misconfigured(reason))
        case (410, _):
            let since: Int64? =
                switch object?["timestamp"] {
                case .integer(let value)?: value
                default: nil
                }
            return .done(.unregistered(reason, since: since))
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .done(.unregistered(reason, since: nil))
        case (400, "IdleTimeout"), (429, "TooManyRequests"): return .done(.retry(reason, after: nil))
        case (429, _): return .done(.misconfigured(reason))
        case (500..., _): return .done(.retry(reason, after: nil))
        default: return .done(.rejected(reason))
        }
    }
}
