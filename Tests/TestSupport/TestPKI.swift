import Foundation
import InternalProtocol
import NIOCore
import ServiceRuntime
import X509

/// One internal CA per test process with a leaf for every service, plus certificates that
/// must be refused: one from a foreign CA and one from our CA naming no service.
package enum TestPKI {
    /// The test CA.
    package static let authority: InternalPKI.Credential = try! InternalPKI.makeAuthority()

    /// TLS material for a service, issued by the test CA.
    /// How long test clients and services may take to open an internal connection: every suite
    /// shares the process's event loops at once, so a TLS handshake can wait far longer than in
    /// production.
    package static let connectTimeout = TimeAmount.seconds(30)

    /// How long a test service's readiness check waits for its database, which every suite loads
    /// at once (1 s, the production default, expired for a live database in a clean-clone run).
    package static let readinessTimeout = Duration.seconds(5)

    /// The deadline of an internal call whose caller sets none. It bounds a hang, not speed:
    /// 10 s, the production default, expired for a registration while every suite (and, in
    /// the busy-machine check, two other processes) shared the two cores.
    package static let internalTimeout = Duration.seconds(45)

    /// The configuration keys that give a test process these timeouts.
    package static var timeoutEnvironment: [String: String] {
        [
            "BAAS_INTERNAL_CONNECT_TIMEOUT_MS": "\(connectTimeout.nanoseconds / 1_000_000)",
            "BAAS_READINESS_TIMEOUT_MS": "\(readinessTimeout.components.seconds * 1000)",
            "BAAS_INTERNAL_TIMEOUT_MS": "\(internalTimeout.components.seconds * 1000)",
        ]
    }

    /// Writes the test CA and a leaf for every service into `directory` (`BAAS_PKI_DIR`'s
    /// layout), so that service processes and the services of this test process trust each other.
    package static func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try authority.certificatePEM.write(toFile: "\(directory)/ca.pem", atomically: true, encoding: .utf8)
        try authority.privateKeyPEM.write(toFile: "\(directory)/ca-key.pem", atomically: true, encoding: .utf8)
        try InternalPKI.initialize(directory: directory)
    }

    package static func material(for service: ServiceName) -> TLSMaterial {
        material(commonName: service.executable)
    }

    /// TLS material with an arbitrary common name, issued by the test CA.
    package static func material(commonName: String) -> TLSMaterial {
        let leaf = try! InternalPKI.issueLeaf(commonName: commonName, dnsNames: [], authority: authority)
        return TLSMaterial(authority: authority.certificate, leaf: leaf)
    }

    /// TLS material whose leaf comes from another CA (it still trusts the real one).
    package static func foreignMaterial(commonName: String) -> TLSMaterial {
        let rogue = try! InternalPKI.makeAuthority()
        let leaf = try! InternalPKI.issueLeaf(commonName: commonName, dnsNames: [], authority: rogue)
        return TLSMaterial(authority: authority.certificate, leaf: leaf)
    }
}
