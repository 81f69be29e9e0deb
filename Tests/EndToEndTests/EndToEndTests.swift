import Foundation
import InternalProtocol
import TestSupport
import Testing

/// All seven services in one process, driven through the gateway only.
@Suite(.timeLimit(.minutes(20))) struct EndToEndTests {
    @Test func infoReportsEveryServiceReady() async throws {
        try await TestCluster.with { cluster async throws in
            let answer = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix() + "/info")
            #expect(answer.status == 200)
            #expect(answer.json["appId"] as? String == cluster.app.id)
            #expect(answer.json["name"] as? String == cluster.app.name)
            #expect(answer.json["ready"] as? Bool == true)
            let services = try #require(answer.json["services"] as? [[String: any Sendable]])
            #expect(services.map { $0["name"] as? String } == ServiceName.allCases.map(\.executable))
            #expect(services.allSatisfy { $0["ready"] as? Bool == true })
        }
    }

    @Test func aStoppedServiceIsReportedDownWithinTheDeadline() async throws {
        // The deadline leaves the live services room to answer while every suite loads the
        // machine; the stopped one must not hold the answer past it. The bound is the configured
        // deadline plus slack for a busy scheduler, never a figure of its own.
        let deadline = Duration.milliseconds(20_000)
        let environment = ["BAAS_GATEWAY_INFO_DEADLINE_MS": "\(deadline.components.seconds * 1000)"]
        try await TestCluster.with(environment: environment, mostlyWaiting: true) { cluster async throws in
            await cluster.stop(.data)
            let started = ContinuousClock.now
            let answer = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix() + "/info")
            #expect(ContinuousClock.now - started < deadline + .seconds(20))
            #expect(answer.status == 200)
            #expect(answer.json["ready"] as? Bool == false)
            let services = try #require(answer.json["services"] as? [[String: any Sendable]])
            for service in services {
                let isData = service["name"] as? String == "data-service"
                #expect(service["ready"] as? Bool == !isData)
            }
            let forwarded = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix() + "/data/Person")
            #expect(forwarded.status == 503)
            #expect(forwarded.json["message"] as? String == "Service data-service is unavailable")
        }
    }

    @Test func resolvedKeysAreCached() async throws {
        // A lifetime no busy machine outlasts between the two calls (stopping a service takes
        // seconds then); the default 10 s expired once while two other processes held both cores.
        try await TestCluster.with(environment: ["BAAS_GATEWAY_KEY_CACHE_SECONDS": "600"], mostlyWaiting: true) {
            cluster async throws in
            let url = cluster.gatewayURL + cluster.prefix() + "/data/Person"
            #expect(try await HTTPTestClient.send(.GET, url).status == 404)
            await cluster.stop(.users)
            let cached = try await HTTPTestClient.send(.GET, url)
            #expect(cached.status == 404)
            #expect(cached.json["code"] as? Int == 1009)
            let uncached = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + cluster.prefix(.js) + "/data/Person")
            #expect(uncached.status == 503)
        }
    }

    @Test func aStoppedUsersServiceMakesKeyChecks503NotA401() async throws {
        try await TestCluster.with(environment: ["BAAS_GATEWAY_KEY_CACHE_SECONDS": "0"], mostlyWaiting: true) {
            cluster async throws in
            await cluster.stop(.users)
            let answer = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix() + "/info")
            #expect(answer.status == 503)
            #expect(answer.json["code"] as? Int == 503)
        }
    }
}
