import Foundation
import InternalProtocol
import Logging
import NIOCore
import Permissions
import ServiceRuntime
import Synchronization
import TestSupport
import Testing

@testable import GatewayService

/// The gateway's share of the security model: a data request no row could be allowed is
/// refused with 1023 before it is routed, anything a row may decide reaches data-service, and a
/// change to the rules takes effect on the caller's very next request.
@Suite(.timeLimit(.minutes(20))) struct PermissionGateTests {
    /// The cache behind the gate, driven with a scripted data-service and catalog announcements.
    @Test(.tags(.fast)) func cachedRulesFollowAnnouncementsAndNeverGoBack() async throws {
        actor Script {
            var answers: [PermissionRulesLookup.Response] = []
            var calls = 0
            func next() -> PermissionRulesLookup.Response {
                calls += 1
                return answers.count > 1 ? answers.removeFirst() : answers[0]
            }
            func set(_ answers: [PermissionRulesLookup.Response]) { self.answers = answers }
        }
        var denying = PermissionRules()
        denying.global.set(.role("RestUser"), .find, .deny)
        let script = Script()
        let gate = PermissionGate { _, _ in await script.next() }
        let anonymous = Identity.anonymous(appId: "A", keyKind: .rest)
        let find = DataRequest(table: "Doc", operation: .find)
        let context = CallContext(deadline: NIODeadline.now() + .seconds(5), logger: Logger(label: "test"))
        func refused() async -> Bool {
            do {
                try await gate.check(find, identity: anonymous, context: context)
                return false
            } catch {
                return (error as? ErrorEnvelope)?.code == 1023
            }
        }

        await script.set([.init(version: 1, rules: denying)])
        #expect(await !refused(), "not listening: nothing is refused, nothing asked")
        #expect(await script.calls == 0)
        await gate.setListening(true)
        #expect(await refused())
        #expect(await refused())
        #expect(await script.calls == 1, "cached")
        // Version 2 lifts the rule; an instance still at version 1 must not be believed.
        await gate.receive("A 2")
        await script.set([.init(version: 1, rules: denying), .init(version: 2, rules: PermissionRules())])
        #expect(await !refused(), "old rules are not used: data-service decides")
        #expect(await !refused())
        #expect(await script.calls == 3)
        #expect(await !refused())
        #expect(await script.calls == 3, "version 2 is cached")
        // A reconnection drops the entries but not what was announced.
        await gate.setListening(false)
        await gate.setListening(true)
        await script.set([.init(version: 1, rules: denying)])
        #expect(await !refused())
        // Another app's announcement leaves this app's entry alone; an unreadable one drops all.
        await script.set([.init(version: 3, rules: denying)])
        await gate.receive("A 3")
        #expect(await refused())
        let calls = await script.calls
        await gate.receive("B 9")
        #expect(await refused())
        #expect(await script.calls == calls)
        await gate.receive("garbage")
        #expect(await refused())
        #expect(await script.calls == calls + 1)
    }

    /// The versions the gateway carries as each request's catalog floor: the newest announced or
    /// reported by an answer, per app, never going back; a reported version drops older rules.
    @Test(.tags(.fast)) func catalogVersionsComeFromAnnouncementsAndAnswersAndNeverGoBack() async throws {
        var denying = PermissionRules()
        denying.global.set(.role("RestUser"), .find, .deny)
        let lookups = Mutex(0)
        let committed = Mutex<Int64>(5)
        let rules = denying
        let gate = PermissionGate { _, _ in
            lookups.withLock { $0 += 1 }
            return .init(version: committed.withLock { $0 }, rules: rules)
        }
        #expect(gate.version(of: "A") == nil)
        await gate.receive("A 3")
        await gate.reached(5, appID: "A")
        await gate.reached(4, appID: "A")
        await gate.receive("A 2")
        #expect(gate.version(of: "A") == 5)
        #expect(gate.version(of: "B") == nil)
        await gate.setListening(true)
        let context = CallContext(deadline: NIODeadline.now() + .seconds(5), logger: Logger(label: "test"))
        let find = DataRequest(table: "Doc", operation: .find)
        await #expect(throws: ErrorEnvelope.self) {
            try await gate.check(find, identity: .anonymous(appId: "A", keyKind: .rest), context: context)
        }
        committed.withLock { $0 = 6 }
        await gate.reached(6, appID: "A")
        await #expect(throws: ErrorEnvelope.self) {
            try await gate.check(find, identity: .anonymous(appId: "A", keyKind: .rest), context: context)
        }
        #expect(lookups.withLock { $0 } == 2, "an answer reporting version 6 dropped the rules of version 5")
    }

    @Test func aRuleNoRowCanOverrideIsRefusedWithoutAskingDataService() async throws {
        try await TestCluster.with { cluster async throws in
            #expect(try await cluster.send(.POST, "/data/Doc", #"{"n": 1}"#).status == 200)
            let deny = #"{"permission": "FIND", "role": "RestUser"}"#
            #expect(try await cluster.send(.PUT, "/data/*/permissions/DENY", deny, key: .serverCode).status == 200)
            // Give the gateway's catalog listener time to subscribe, so the rules are cached.
            try await Task.sleep(for: .milliseconds(300))
            for path in ["/data/Doc", "/data/Doc/count"] {
                let refused = try await cluster.send(.GET, path)
                #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(refused.text)")
            }
            await cluster.stop(.data)
            let refused = try await cluster.send(.GET, "/data/Doc/count")
            #expect(refused.status == 403, "answered by the gateway alone: \(refused.text)")
            #expect(refused.text == #"{"code":1023,"message":"Permission denied: Find on table 'Doc'","status":403}"#)
            // The JavaScript key is not denied, so its request is routed — to a stopped service.
            #expect(try await cluster.send(.GET, "/data/Doc", key: .js).status == 503)
        }
    }

    @Test func aRuleThatLetsRowsThroughIsRoutedOnTheNextRequest() async throws {
        try await TestCluster.with { cluster async throws in
            let id = try #require(try await cluster.send(.POST, "/data/Doc", #"{"n": 1}"#).json["objectId"] as? String)
            let deny = #"{"permission": "FIND", "role": "RestUser"}"#
            #expect(try await cluster.send(.PUT, "/data/*/permissions/DENY", deny, key: .serverCode).status == 200)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await cluster.send(.GET, "/data/Doc/\(id)").status == 403)
            // A table grant for the role precedes the global deny (layer 7 before 9).
            #expect(try await cluster.send(.PUT, "/data/Doc/permissions/GRANT", deny, key: .serverCode).status == 200)
            #expect(try await cluster.send(.GET, "/data/Doc/\(id)").status == 200)
            #expect(try await cluster.send(.PUT, "/data/Doc/permissions/INHERIT", deny, key: .serverCode).status == 200)
            #expect(try await cluster.send(.GET, "/data/Doc/\(id)").status == 403)
            // An object ACL could grant a row: once one exists for Find, the rows decide.
            let grant = #"{"permission": "FIND", "role": "RestUser"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/GRANT/\(id)", grant, key: .serverCode).status == 200
            )
            let found = try await cluster.send(.GET, "/data/Doc")
            #expect(found.status == 200 && found.text.contains(id), "\(found.text)")
        }
    }
}
