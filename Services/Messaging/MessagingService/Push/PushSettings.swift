import AsyncHTTPClient
import Configuration
import NIOCore
import NIOSSL

/// Where push goes and what it trusts. Configuration keys (environment variables):
/// - `BAAS_PUSH_APNS_URL`: the APNs base URL for every credential (unset: Apple's production or
///   sandbox host, as the credential says).
/// - `BAAS_PUSH_FCM_URL`: the FCM base URL (default `https://fcm.googleapis.com`).
/// - `BAAS_PUSH_CA_FILE`: PEM roots trusted besides the system's (a test peer's authority).
/// - `BAAS_PUSH_RETRY_BASE_MS`, `BAAS_PUSH_RETRY_CAP_MS`: the first wait before a retry (default
///   1000, doubled each time) and the longest (default 900000, Apple's 15 minutes).
struct PushSettings: Sendable {
    var apnsURL: String?
    var fcmURL = "https://fcm.googleapis.com"
    var caFile: String?
    var retry = PushQueue.RetryPolicy()

    static func read(_ reader: ConfigReader) -> PushSettings {
        let push = reader.scoped(to: "push")
        // Compose passes unset variables as empty strings.
        func optional(_ key: String) -> String? {
            push.string(forKey: ConfigKey(key)).flatMap { $0.isEmpty ? nil : $0 }
        }
        var retry = PushQueue.RetryPolicy()
        retry.base = Int64(push.int(forKey: "retryBaseMs", default: 1_000))
        retry.cap = Int64(push.int(forKey: "retryCapMs", default: 900_000))
        return PushSettings(
            apnsURL: optional("apnsURL"), fcmURL: optional("fcmURL") ?? "https://fcm.googleapis.com",
            caFile: optional("caFile"),
            retry: retry)
    }

    /// The APNs base URL for a credential of `production` or sandbox.
    func apnsBase(production: Bool) -> String {
        apnsURL ?? (production ? "https://api.push.apple.com" : "https://api.sandbox.push.apple.com")
    }

    /// One client for every provider: HTTP/2 where the peer offers it through ALPN (APNs always
    /// does), certificates verified against the system's roots and `caFile`'s.
    func httpClient() throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
