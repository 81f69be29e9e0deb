import Configuration
import Foundation

/// The gateway's own settings.
///
/// Configuration keys (environment variables):
/// - `BAAS_GATEWAY_HOST`: address of the public server (default `0.0.0.0`).
/// - `BAAS_GATEWAY_PORT`: public port (default 8080; 0 picks one).
/// - `BAAS_GATEWAY_BODY_LIMIT`: largest request body in bytes (default 33554432, 32 MiB).
/// - `BAAS_GATEWAY_DEFAULT_APP_ID`: the app of `/api/…` requests without an `application-id` header.
/// - `BAAS_GATEWAY_KEYLESS_API_PATH`: let `/api/…` requests without an `api-key` header act as the
///   app's REST client (as Backendless subdomains do; default false).
/// - `BAAS_GATEWAY_KEY_CACHE_SECONDS`: how long a resolved (or rejected) key is cached (default 10).
/// - `BAAS_GATEWAY_SESSION_CACHE_SECONDS`: how long a resolved `user-token` is cached (default 10;
///   0 turns the cache off). Logouts and other session changes reach the cache at once through
///   `LISTEN/NOTIFY`, so this bounds only how late an idle session's last activity is recorded.
/// - `BAAS_GATEWAY_TRUSTED_PROXIES`: comma-separated addresses of load balancers whose
///   `X-Forwarded-For` names the client (for per-address login limits; default none).
/// - `BAAS_GATEWAY_CORS_ORIGINS`: comma-separated allowed origins, or `*` for any (default `*`).
/// - `BAAS_GATEWAY_INFO_DEADLINE_MS`: how long `/info` waits for each service (default 2000).
/// - `BAAS_GATEWAY_FILES_ROOT`: files-service's local store (`BAAS_FILES_ROOT`) as the gateway
///   can read it; when set, the gateway sends downloads from it itself (default unset).
/// - `BAAS_GATEWAY_ROUTES_REFRESH_SECONDS`: how often the services' route manifests are asked
///   for again once all have answered (default 30).
/// - `BAAS_GATEWAY_RT_URL`: the URL real-time clients are told to connect to (`rt/lookup`,
///   `info`'s `rtURL`; default this gateway as the client reached it).
package struct GatewayConfiguration: Sendable {
    /// Public bind address.
    package var host: String
    /// Public port.
    package var port: Int
    /// Largest request body in bytes.
    package var bodyLimit: Int
    /// App of `/api/…` requests without an `application-id` header.
    package var defaultAppID: String?
    /// Whether `/api/…` without a key acts as the REST client.
    package var keylessAPIPath: Bool
    /// Key cache lifetime in seconds.
    package var keyCacheSeconds: Int
    /// Session-token cache lifetime in seconds.
    package var sessionCacheSeconds: Int
    /// Proxies whose `X-Forwarded-For` is believed.
    package var trustedProxies: Set<String>
    /// Allowed CORS origins; empty means any.
    package var corsOrigins: [String]
    /// Deadline of each readiness call made by `/info`, in milliseconds.
    package var infoDeadlineMilliseconds: Int
    /// How long a client connection may take to send a request head (slowloris), and stay idle
    /// between requests, before it is closed.
    package var headTimeoutMilliseconds: Int
    /// Seconds between two rounds of asking the services for their route manifests.
    package var routesRefreshSeconds: Int
    /// files-service's local store, read by the gateway for downloads.
    package var filesRoot: String?
    /// The URL real-time clients connect to, when not this gateway as reached.
    package var realTimeURL: String?

    /// Reads the gateway keys.
    package init(reader: ConfigReader) {
        let gateway = reader.scoped(to: "baas").scoped(to: "gateway")
        host = gateway.string(forKey: "host", default: "0.0.0.0")
        port = gateway.int(forKey: "port", default: 8080)
        bodyLimit = gateway.int(forKey: "bodyLimit", default: 32 << 20)
        defaultAppID = gateway.string(forKey: "defaultAppId")
        keylessAPIPath = gateway.bool(forKey: "keylessApiPath", default: false)
        keyCacheSeconds = gateway.int(forKey: "keyCacheSeconds", default: 10)
        sessionCacheSeconds = gateway.int(forKey: "sessionCacheSeconds", default: 10)
        trustedProxies = Set(
            gateway.string(forKey: "trustedProxies", default: "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        let origins = gateway.string(forKey: "corsOrigins", default: "*")
        corsOrigins =
            origins == "*" ? [] : origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        infoDeadlineMilliseconds = gateway.int(forKey: "infoDeadlineMs", default: 2_000)
        headTimeoutMilliseconds = max(100, gateway.int(forKey: "headTimeoutMs", default: 30_000))
        routesRefreshSeconds = max(1, gateway.int(forKey: "routesRefreshSeconds", default: 30))
        filesRoot = gateway.string(forKey: "filesRoot").flatMap { $0.isEmpty ? nil : $0 }
        realTimeURL = gateway.string(forKey: "rtUrl").flatMap {
            $0.isEmpty ? nil : $0.hasSuffix("/") ? String($0.dropLast()) : $0
        }
    }
}
