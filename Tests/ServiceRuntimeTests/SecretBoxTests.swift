import Configuration
import Crypto
import Foundation
import ServiceRuntime
import TestSupport
import Testing

/// Secrets sealed for storage open only with their key and for what they were sealed for.
@Suite(.tags(.fast)) struct SecretBoxTests {
    @Test func opensOnlyWithItsKeyAndContext() throws {
        let box = SecretBox(key: SymmetricKey(size: .bits256))
        let sealed = try box.seal("-----BEGIN PRIVATE KEY-----", context: "push/apns/app1")
        #expect(sealed.hasPrefix("v1.") && !sealed.contains("PRIVATE"))
        #expect(try box.open(sealed, context: "push/apns/app1") == "-----BEGIN PRIVATE KEY-----")
        #expect(try box.seal("same", context: "c") != box.seal("same", context: "c"), "a fresh nonce every time")
        #expect(throws: SecretBox.Unopenable.self) { try box.open(sealed, context: "push/apns/app2") }
        #expect(throws: SecretBox.Unopenable.self) {
            try SecretBox(key: SymmetricKey(size: .bits256)).open(sealed, context: "push/apns/app1")
        }
        var altered = Array(sealed.utf8)
        altered[10] = altered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SecretBox.Unopenable.self) {
            try box.open(String(decoding: altered, as: UTF8.self), context: "push/apns/app1")
        }
        #expect(throws: SecretBox.Unopenable.self) { try box.open("v2.AAAA", context: "push/apns/app1") }
    }

    @Test func theKeyIsReadFromConfiguration() throws {
        let key = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let reader = { (values: [String: String]) in ConfigReader.fromEnvironment(values).scoped(to: "baas") }
        #expect(try SecretBox.read(reader([:])) == nil)
        #expect(try SecretBox.read(reader(["BAAS_SECRETS_KEY": ""])) == nil, "compose passes unset variables as empty")
        let box = try #require(try SecretBox.read(reader(["BAAS_SECRETS_KEY": key])))
        #expect(try box.open(box.seal("x", context: "c"), context: "c") == "x")
        #expect(throws: UsageError.self) { try SecretBox.read(reader(["BAAS_SECRETS_KEY": "c2hvcnQ="])) }
    }
}
