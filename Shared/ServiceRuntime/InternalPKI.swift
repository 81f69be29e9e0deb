import Crypto
import Foundation
import InternalProtocol
import NIOSSL
import SwiftASN1
import X509

/// The internal certificate authority: one CA and one leaf per process, used for mutual TLS on
/// the internal protocol. Every leaf serves and authenticates (its common name is the service's
/// executable name, which the callee reads as proof of origin).
package enum InternalPKI {
    /// Organisation name on every internal certificate.
    static let organisation = "BaaS internal"

    /// A certificate with its private key.
    package struct Credential: Sendable {
        /// The certificate.
        package let certificate: Certificate
        /// Its private key.
        package let privateKey: P256.Signing.PrivateKey

        /// PEM text of the certificate.
        package var certificatePEM: String { get throws { try certificate.serializeAsPEM().pemString } }
        /// PEM text of the key.
        package var privateKeyPEM: String { privateKey.pemRepresentation }
    }

    /// Makes a new self-signed CA valid for ten years.
    package static func makeAuthority(now: Date = Date()) throws -> Credential {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName(organisation)
            CommonName("\(organisation) CA")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 300, notValidAfter: now + 10 * 365 * 86_400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(key))
        return Credential(certificate: certificate, privateKey: key)
    }

    /// Issues a leaf for `commonName`, valid for the given DNS names plus `localhost` and 127.0.0.1.
    package static func issueLeaf(
        commonName: String, dnsNames: [String], authority: Credential, now: Date = Date()
    ) throws -> Credential {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            OrganizationName(organisation)
            CommonName(commonName)
        }
        let names = Set(dnsNames + [commonName, "localhost"]).sorted().map { GeneralName.dnsName($0) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 300, notValidAfter: now + 2 * 365 * 86_400,
            issuer: authority.certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames(names + [.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(authority.privateKey))
        return Credential(certificate: certificate, privateKey: key)
    }

    /// The common name of a certificate, if it has one.
    package static func commonName(of certificate: Certificate) -> String? {
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                return String(attribute.value)
            }
        }
        return nil
    }
}

/// What one process needs for mutual TLS: the CA to trust and its own leaf.
package struct TLSMaterial: Sendable {
    /// The CA certificate every peer must chain to.
    package let authority: Certificate
    /// This process's certificate and key.
    package let leaf: InternalPKI.Credential

    /// Creates material from parts.
    package init(authority: Certificate, leaf: InternalPKI.Credential) {
        self.authority = authority
        self.leaf = leaf
    }

    /// Loads `ca.pem`, `<name>.pem` and `<name>-key.pem` from `directory`.
    package init(directory: String, name: String) throws {
        func read(_ file: String) throws -> String {
            try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
        }
        authority = try Certificate(pemEncoded: read("ca.pem"))
        leaf = InternalPKI.Credential(
            certificate: try Certificate(pemEncoded: read("\(name).pem")),
            privateKey: try P256.Signing.PrivateKey(pemRepresentation: read("\(name)-key.pem")))
    }

    /// Server side: TLS 1.3, ALPN for h2, and a client certificate from the CA required.
    package func serverConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try nioCertificate(leaf.certificate))],
            privateKey: .privateKey(try nioKey()))
        configuration.minimumTLSVersion = .tlsv13
        configuration.trustRoots = .certificates([try nioCertificate(authority)])
        configuration.certificateVerification = .noHostnameVerification
        return configuration
    }

    /// Client side: TLS 1.3, trusting only the internal CA, presenting this process's leaf.
    package func clientConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv13
        configuration.trustRoots = .certificates([try nioCertificate(authority)])
        configuration.certificateChain = [.certificate(try nioCertificate(leaf.certificate))]
        configuration.privateKey = .privateKey(try nioKey())
        return configuration
    }

    private func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem)
    }

    private func nioKey() throws -> NIOSSLPrivateKey {
        try NIOSSLPrivateKey(bytes: Array(leaf.privateKey.pemRepresentation.utf8), format: .pem)
    }
}
