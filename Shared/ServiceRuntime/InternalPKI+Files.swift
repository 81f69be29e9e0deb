import Crypto
import Foundation
import InternalProtocol
import SwiftASN1
import X509

extension InternalPKI {
    /// Writes a CA (kept if one exists) and a leaf for every service that has none into
    /// `directory`, readable by the owner only. Idempotent: a second run changes nothing. A leaf's DNS
    /// names are its executable name (the compose host name) and `localhost`.
    package static func initialize(directory: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        let authority = try loadOrCreateAuthority(directory: directory)
        for service in ServiceName.allCases {
            let name = service.executable
            guard !files.fileExists(atPath: "\(directory)/\(name).pem") else { continue }
            let leaf = try issueLeaf(commonName: name, dnsNames: [name], authority: authority)
            try write(leaf.privateKeyPEM, to: "\(directory)/\(name)-key.pem")
            try write(leaf.certificatePEM, to: "\(directory)/\(name).pem")
        }
    }

    private static func loadOrCreateAuthority(directory: String) throws -> Credential {
        let certificatePath = "\(directory)/ca.pem"
        let keyPath = "\(directory)/ca-key.pem"
        if FileManager.default.fileExists(atPath: certificatePath) {
            return Credential(
                certificate: try Certificate(pemEncoded: String(contentsOfFile: certificatePath, encoding: .utf8)),
                privateKey: try .init(pemRepresentation: String(contentsOfFile: keyPath, encoding: .utf8)))
        }
        let authority = try makeAuthority()
        try write(authority.privateKeyPEM, to: keyPath)
        try write(authority.certificatePEM, to: certificatePath)
        return authority
    }

    private static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
