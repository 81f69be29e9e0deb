import Foundation
import InternalProtocol
import Permissions
import TestSupport
import Testing

/// Golden JSON for the internal wire types: a change here is a protocol change.
@Suite(.tags(.fast)) struct WireFormatTests {
    private func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder.sortedKeys.encode(value), as: UTF8.self)
    }

    @Test func errorEnvelope() throws {
        #expect(
            try json(ErrorEnvelope.invalidApplicationInfo)
                == #"{"code":2002,"message":"Invalid application info (application id or api key)","status":401}"#)
    }

    @Test func identity() throws {
        let identity = Identity(appId: "A", keyKind: .ios, userId: "U", roles: ["AuthenticatedUser", "IOSUser"])
        #expect(
            try json(identity) == #"{"appId":"A","keyKind":"IOS","roles":["AuthenticatedUser","IOSUser"],"userId":"U"}"#
        )
        #expect(try Identity(headerValue: identity.headerValue()) == identity)
        #expect(try !identity.headerValue().contains(where: { "+/=".contains($0) }))
    }

    @Test func identityHeadersAreRememberedPerIdentityWithoutMixingThem() throws {
        let anonymous = Identity(appId: "A", keyKind: .rest, roles: ["NotAuthenticatedUser"])
        var user = anonymous
        user.userId = "U"
        for _ in 0..<3 {
            #expect(try Identity(headerValue: anonymous.headerValue()) == anonymous)
            #expect(try Identity(headerValue: user.headerValue()) == user)
        }
        #expect(try anonymous.headerValue() != user.headerValue())
    }

    @Test func aMemoKeepsItsBoundAndForgetsFailures() throws {
        let memo = BoundedMemo<Int, Int>(capacity: 2)
        var computed = 0
        for key in [1, 2, 1, 2, 3, 1] {
            let value = memo.value(for: key) { key in
                computed += 1
                return key * 10
            }
            #expect(value == key * 10)
        }
        #expect(computed == 4)  // 1, 2, then 3 emptied the full memo, then 1 again
        #expect(throws: ErrorEnvelope.self) { try memo.value(for: 9) { _ in throw ErrorEnvelope.internalError } }
        #expect(memo.value(for: 9) { $0 } == 9)
    }

    @Test func malformedIdentityHeaderIsABadRequest() {
        #expect(throws: ErrorEnvelope.self) { try Identity(headerValue: "%%%") }
    }

    @Test func operations() throws {
        #expect(try json(ResolveAPIKey.Request(appId: "A", apiKey: "K")) == #"{"apiKey":"K","appId":"A"}"#)
        #expect(
            try json(ResolveAPIKey.Response(appId: "A", appName: "N", keyKind: .serverCode))
                == #"{"appId":"A","appName":"N","keyKind":"SERVER_CODE"}"#)
        #expect(
            try json(SystemStatus.Response(service: .geo, ready: false, detail: "x"))
                == #"{"detail":"x","ready":false,"service":"geo"}"#)
        #expect(try json(GetApp.Response(appId: "A", name: "N")) == #"{"appId":"A","name":"N"}"#)
        #expect(try json(Empty()) == "{}")
        #expect(try json(ResolveUserToken.Request(appId: "A", token: "T")) == #"{"appId":"A","token":"T"}"#)
        #expect(
            try json(ResolveUserToken.Response(userId: "U", roles: ["R"], sessionId: "S"))
                == #"{"roles":["R"],"sessionId":"S","userId":"U"}"#)
        var withSession = Identity(appId: "A", keyKind: .rest, userId: "U", roles: [])
        withSession.sessionId = "S"
        #expect(try json(withSession) == #"{"appId":"A","keyKind":"REST","roles":[],"sessionId":"S","userId":"U"}"#)
        #expect(
            try json(SaveUser.Request(objectId: "U", object: #"{"password":"p"}"#))
                == #"{"object":"{\"password\":\"p\"}","objectId":"U"}"#)
        #expect(try json(SaveUser.Request(objectId: nil, object: "{}")) == #"{"object":"{}"}"#)
        #expect(try json(SaveUser.Response(user: "{}", endedSessions: true)) == #"{"endedSessions":true,"user":"{}"}"#)
        #expect(SaveUser.callers == [.data] && !SaveUser.isIdempotent)
        #expect(ResolveSession.callers == [.messaging] && ResolveSession.isIdempotent)
        #expect(try json(ResolveSession.Request(appId: "A", sessionId: "S")) == #"{"appId":"A","sessionId":"S"}"#)
    }

    @Test(arguments: APIKeyKind.allCases) func everyKeyKindHasItsRole(kind: APIKeyKind) {
        let expected: [APIKeyKind: String] = [
            .rest: "RestUser", .js: "JSUser", .android: "AndroidUser", .ios: "IOSUser", .dotnet: "DotNetUser",
            .actionScript: "ASUser", .serverCode: "ServerCodeUser",
        ]
        #expect(kind.role == expected[kind])
    }

    @Test func serviceNames() {
        #expect(
            ServiceName.allCases.map(\.executable) == [
                "gateway", "users-service", "data-service", "relations-service", "messaging-service", "files-service",
                "geo-service",
            ])
        #expect(ServiceName(executable: "data-service") == .data)
        #expect(ServiceName(executable: "intruder") == nil)
    }
}

/// Golden JSON for `permissions.rules`, the gateway's copy of an app's row-independent rules.
@Suite struct PermissionWireFormatTests {
    @Test func permissionRules() throws {
        var rules = PermissionRules()
        rules.global.set(.role("NotAuthenticatedUser"), .find, .deny)
        rules.containers["doc", default: PermissionCells()].set(.user("U"), .update, .grant)
        rules.owner["doc"] = [.remove: .grant]
        rules.aclOperations["doc"] = [.find]
        let response = PermissionRulesLookup.Response(version: 7, rules: rules)
        let text = String(decoding: try JSONEncoder.sortedKeys.encode(response), as: UTF8.self)
        #expect(
            text == #"{"rules":{"aclOperations":[{"container":"doc","operation":"Find"}],"#
                + #""cells":[{"container":"","decision":"DENY","kind":"role","operation":"Find","principal":"NotAuthenticatedUser"},"#
                + #"{"container":"doc","decision":"GRANT","kind":"user","operation":"Update","principal":"U"}],"#
                + #""owner":[{"container":"doc","decision":"GRANT","operation":"Remove"}]},"version":7}"#)
        #expect(try JSONDecoder().decode(PermissionRulesLookup.Response.self, from: Data(text.utf8)) == response)
        #expect(
            try JSONEncoder.sortedKeys.encode(PermissionRulesLookup.Request(appId: "A")) == Data(#"{"appId":"A"}"#.utf8)
        )
    }
}

/// Percent-decoding of paths, query strings and forms, as Foundation's did it.
@Suite struct PercentEncodingTests {
    @Test func decodesEscapesPlusAndUTF8AndRefusesTheMalformed() {
        let cases: [(String, Bool, String?)] = [
            ("plain", false, "plain"), ("a%20b", false, "a b"), ("a+b", false, "a+b"), ("a+b", true, "a b"),
            ("k%3D7", true, "k=7"), ("%C3%A9t%c3%a9", false, "été"), ("%", false, nil), ("%4", false, nil),
            ("%zz", false, nil), ("%FF", false, nil), ("100%25", false, "100%"), ("", false, ""),
        ]
        for (text, plus, expected) in cases {
            #expect(PercentEncoding.decode(text, plusAsSpace: plus) == expected, "\(text)")
        }
        for text in ["a%20b+c", "%C3%A9", "x%2Fy", "k%3D7&z"] {
            #expect(
                PercentEncoding.decode(text, plusAsSpace: true)
                    == text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding)
        }
    }
}
