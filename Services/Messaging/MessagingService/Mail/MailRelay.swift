import Configuration
import Foundation
import NIOSSL
import ServiceRuntime

/// The SMTP relay messaging-service delivers through.
///
/// Configuration keys (environment variables):
/// - `BAAS_SMTP_HOST`: the relay (unset: email is not configured and sending answers 5100).
/// - `BAAS_SMTP_PORT`: its port (default 587).
/// - `BAAS_SMTP_STARTTLS`: `required` (default), `opportunistic` (when the relay offers it) or
///   `off` (a loopback relay in development).
/// - `BAAS_SMTP_CA_FILE`: PEM certificates to trust for the relay instead of the system's.
/// - `BAAS_SMTP_USER`, `BAAS_SMTP_PASSWORD`: AUTH credentials, only ever sent over TLS.
/// - `BAAS_SMTP_FROM`: the sender address (default `no-reply@localhost`).
/// - `BAAS_SMTP_HELO`: the name this side greets with (default `localhost`).
/// - `BAAS_SMTP_MAX_ATTACHMENT_BYTES`: the most bytes an email's attachments from file storage
///   may hold together (default 10 MiB; read by ``MessagingService``).
package struct MailRelay: Sendable {
    /// When to upgrade the connection with STARTTLS.
    package enum StartTLS: String, Sendable {
        case required, opportunistic, off
    }

    /// Host name or address of the relay.
    package var host: String
    /// Its SMTP port.
    package var port: Int
    /// When to upgrade with STARTTLS.
    package var startTLS: StartTLS
    /// A PEM file of roots to verify the relay against, instead of the system's.
    package var trustRoots: String?
    /// AUTH user name.
    package var username: String?
    /// AUTH password.
    package var password: String?
    /// The envelope and header sender.
    package var from: String
    /// The EHLO name.
    package var heloName: String

    /// A relay at `host:port`.
    package init(
        host: String, port: Int, startTLS: StartTLS = .required, trustRoots: String? = nil, username: String? = nil,
        password: String? = nil, from: String = "no-reply@localhost", heloName: String = "localhost"
    ) {
        self.host = host
        self.port = port
        self.startTLS = startTLS
        self.trustRoots = trustRoots
        self.username = username
        self.password = password
        self.from = from
        self.heloName = heloName
    }

    /// The configured relay, or nil when `BAAS_SMTP_HOST` is unset.
    package static func read(_ reader: ConfigReader) throws -> MailRelay? {
        let smtp = reader.scoped(to: "smtp")
        guard let host = smtp.string(forKey: "host"), !host.isEmpty else { return nil }
        let mode = smtp.string(forKey: "starttls", default: "required")
        guard let startTLS = StartTLS(rawValue: mode) else {
            throw UsageError("BAAS_SMTP_STARTTLS must be required, opportunistic or off, got \(mode)")
        }
        // Compose passes unset variables as empty strings.
        func optional(_ value: String?) -> String? { value?.isEmpty == false ? value : nil }
        return MailRelay(
            host: host, port: smtp.int(forKey: "port", default: 587), startTLS: startTLS,
            trustRoots: optional(smtp.string(forKey: "caFile")), username: optional(smtp.string(forKey: "user")),
            password: optional(smtp.string(forKey: "password", isSecret: true)),
            from: smtp.string(forKey: "from", default: "no-reply@localhost"),
            heloName: smtp.string(forKey: "helo", default: "localhost"))
    }

    /// The TLS client configuration: full verification against the configured or system roots.
    func tlsConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let trustRoots { configuration.trustRoots = .file(trustRoots) }
        return configuration
    }
}
