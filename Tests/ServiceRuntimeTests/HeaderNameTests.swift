import HTTPTypes
import InternalProtocol
import TestSupport
import Testing

@testable import ServiceRuntime

/// The typed header names: each is the literal the wire protocol and the clients use, so none
/// of `HeaderNames.swift`'s unwraps can fail, and renaming one is a visible wire change.
@Suite(.tags(.fast)) struct HeaderNameTests {
    static let spelled: [(HTTPField.Name, String)] = [
        (.requestID, InternalHeader.requestID), (.traceparent, InternalHeader.traceparent),
        (.deadline, InternalHeader.deadline), (.baasIdentity, InternalHeader.identity),
        (.clientAddress, InternalHeader.clientAddress), (.publicPrefix, InternalHeader.publicPrefix),
        (.sessionsChanged, InternalHeader.sessionsChanged), (.fileDirect, InternalHeader.fileDirect),
        (.fileLocation, InternalHeader.fileLocation), (.fileRange, InternalHeader.fileRange),
        (.userToken, "user-token"), (.applicationID, "application-id"), (.apiKey, "api-key"),
        (.secretKey, "secret-key"), (.forwardedFor, "x-forwarded-for"), (.forwardedProto, "x-forwarded-proto"),
        (.contentTypeOptions, "x-content-type-options"),
    ]

    @Test func everyNameIsTheLiteralItStandsFor() {
        for (field, literal) in Self.spelled {
            #expect(field.canonicalName == literal)
        }
        #expect(Set(Self.spelled.map(\.1)).count == Self.spelled.count)
    }

    @Test func theAllowListsNameOnlyWhatMayCross() {
        let request = PassthroughHeaders.requestFields.map(\.canonicalName)
        #expect(request.contains("range") && request.contains("if-none-match"))
        for name in [InternalHeader.identity, InternalHeader.publicPrefix, "user-token", "cookie"] {
            #expect(!request.contains(name))
            #expect(!PassthroughHeaders.responseFields.map(\.canonicalName).contains(name))
        }
    }
}
