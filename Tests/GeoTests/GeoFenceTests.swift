import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Geofences: management with the server-code key, fence filters on searches, and the enter,
/// stay and exit actions over scripted point movements.
@Suite(.timeLimit(.minutes(20))) struct GeoFenceTests {
    static let colorado =
        #"{"name": "colorado", "type": "RECT", "nodes": [{"latitude": 40.979898069620134, "longitude": -109.072265625}, {"latitude": 37.02009820136811, "longitude": -101.953125}], "actions": {"onenter": {"type": "EVENT", "eventname": "colorado"}}}"#

    @Test func fencesAreManagedWithTheServerCodeKeyAndFilterSearches() async throws {
        try await TestCluster.shared { cluster async throws in
            try await cluster.savePoint(20, 20)
            try await cluster.savePoint(39, -108)
            try await cluster.savePoint(38, -105, metadata: #"{"kind": "shop"}"#)
            let denied = try await cluster.send(.POST, "/geo/fences", Self.colorado)
            #expect(denied.status == 403 && denied.json["code"] as? Int == 4000, "\(denied.text)")
            let created = try await cluster.send(.POST, "/geo/fences", Self.colorado, key: .serverCode)
            #expect(
                created.json["geofenceName"] as? String == "colorado" && created.json["objectId"] is String,
                "\(created.text)")
            let circle =
                #"{"name": "denver", "type": "CIRCLE", "nodes": [{"latitude": 39, "longitude": -105}, {"latitude": 39, "longitude": -103}]}"#
            let triangle =
                #"{"name": "tri", "type": "SHAPE", "nodes": [{"latitude": 37, "longitude": -109}, {"latitude": 40, "longitude": -109}, {"latitude": 37, "longitude": -106}]}"#
            for body in [circle, triangle] {
                #expect(try await cluster.send(.POST, "/geo/fences", body, key: .serverCode).status == 200)
            }

            let listed = try await cluster.geo("/geo/fences")
            #expect(listed.map { $0["geofenceName"] as? String } == ["colorado", "denver", "tri"], "\(listed)")
            #expect(try await cluster.geo("/geo/fences?geoFence=denver").first?["type"] as? String == "CIRCLE")
            #expect(try await cluster.geo("/geo/points?geoFence=colorado").count == 2)
            #expect(try await cluster.geo("/geo/points?geoFence=denver").count == 1)
            #expect(try await cluster.geo("/geo/points?geoFence=tri").map { $0["longitude"] as? Double } == [-108])
            #expect(
                try await cluster.geo("/geo/rect?nwlat=39.5&nwlon=-110&selat=30&selon=-100&geoFence=colorado").count
                    == 2)
            #expect(try await cluster.send(.GET, "/geo/count?geoFence=colorado&where=kind%3D%27shop%27").text == "1")
            let unknown = try await cluster.send(.GET, "/geo/points?geoFence=nowhere")
            #expect(unknown.status == 404 && unknown.json["code"] as? Int == 4061)

            let invalid = [
                #"{"name": "x", "type": "OVAL", "nodes": [{"latitude": 1, "longitude": 1}, {"latitude": 2, "longitude": 2}]}"#,
                #"{"name": "x", "type": "RECT", "nodes": [{"latitude": 1, "longitude": 1}]}"#,
                #"{"name": "x", "type": "RECT", "nodes": [{"latitude": 1, "longitude": 1}, {"latitude": 2, "longitude": 2}]}"#,
                #"{"name": "x", "type": "CIRCLE", "nodes": [{"latitude": 95, "longitude": 1}, {"latitude": 2, "longitude": 2}]}"#,
                #"{"name": "x", "type": "SHAPE", "nodes": [{"latitude": 0, "longitude": 0}, {"latitude": 1, "longitude": 1}, {"latitude": 0, "longitude": 1}, {"latitude": 1, "longitude": 0}]}"#,
                #"{"name": "", "type": "RECT", "nodes": []}"#,
                #"{"name": "x", "type": "CIRCLE", "nodes": [{"latitude": 1, "longitude": 1}, {"latitude": 2, "longitude": 2}], "actions": {"onleave": {}}}"#,
            ]
            for body in invalid {
                let answer = try await cluster.send(.POST, "/geo/fences", body, key: .serverCode)
                #expect(answer.status == 400 && answer.json["code"] as? Int == 4060, "\(body): \(answer.text)")
            }
            #expect(try await cluster.send(.DELETE, "/geo/fences/tri").status == 403)
            #expect(
                try await cluster.send(.DELETE, "/geo/fences/tri", key: .serverCode).json["result"] as? Bool == true)
            #expect(try await cluster.send(.DELETE, "/geo/fences/tri", key: .serverCode).json["code"] as? Int == 4061)
            #expect(try await cluster.geo("/geo/fences").count == 2)
        }
    }

    @Test func actionsAsTheSDKTestsRunThem() async throws {
        try await TestCluster.shared { cluster async throws in
            #expect(try await cluster.send(.POST, "/geo/fences", Self.colorado, key: .serverCode).status == 200)
            let point = #"{"latitude": 39, "longitude": -105}"#
            let entered = try await cluster.send(.POST, "/geo/fence/onenter?geoFence=colorado", point)
            #expect(entered.status == 200 && entered.text == "1", "\(entered.text)")
            for action in ["onstay", "onexit"] {
                let refused = try await cluster.send(.POST, "/geo/fence/\(action)?geoFence=colorado", point)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 4063, "\(action): \(refused.text)")
            }
            let missing = try await cluster.send(.POST, "/geo/fence/onexit?geoFence=colorado2", point)
            #expect(missing.status == 404 && missing.json["code"] as? Int == 4061)
            #expect(
                try await cluster.send(.POST, "/geo/fence/onleave?geoFence=colorado", point).json["code"] as? Int
                    == 4001)
            #expect(
                try await cluster.send(
                    .POST, "/geo/fence/onenter?geoFence=colorado", #"{"latitude": 10, "longitude": 10}"#
                ).text == "0")
            #expect(
                try await cluster.send(
                    .POST, "/geo/fence/onenter?geoFence=colorado", #"{"latitude": 100, "longitude": 10}"#
                ).json["code"] as? Int == 4001)
            #expect(
                try await cluster.send(.POST, "/geo/fence/onenter?geoFence=colorado", #"{"name": 1}"#).json["code"]
                    as? Int == 4002)
        }
    }

    @Test func scriptedMovementsEnterStayAndExitExactlyTheExpectedPoints() async throws {
        try await TestCluster.shared { cluster async throws in
            let fence =
                #"{"name": "zone", "type": "CIRCLE", "nodes": [{"latitude": 0, "longitude": 0}, {"latitude": 1, "longitude": 0}], "actions": {"onenter": {}, "onstay": {}, "onexit": {}}}"#
            #expect(try await cluster.send(.POST, "/geo/fences", fence, key: .serverCode).status == 200)
            let a = try await cluster.savePoint(0.5, 0)
            let b = try await cluster.savePoint(0, 0.5)
            let c = try await cluster.savePoint(5, 5)
            func run(_ action: String, _ body: String? = nil) async throws -> Int {
                let answer = try await cluster.send(.POST, "/geo/fence/\(action)?geoFence=zone", body)
                return try #require(Int(answer.text), "\(action): \(answer.text)")
            }
            #expect(try await run("onenter") == 2)
            #expect(try await run("onenter") == 0, "already inside")
            #expect(try await run("onstay") == 2)
            #expect(try await run("onexit") == 0)
            #expect(
                try await cluster.send(.PATCH, "/geo/points/\(b)", #"{"latitude": 3, "longitude": 3}"#).status == 200)
            #expect(
                try await cluster.send(.PATCH, "/geo/points/\(c)", #"{"latitude": -0.5, "longitude": 0.2}"#).status
                    == 200)
            #expect(try await run("onexit") == 1)
            #expect(try await run("onenter") == 1)
            #expect(try await run("onstay") == 2)
            #expect(try await cluster.send(.DELETE, "/geo/points/\(a)").status == 200)
            #expect(try await run("onexit") == 1, "a deleted point leaves")
            // One reported position of a saved point: B comes back, by its coordinates.
            #expect(try await run("onenter", #"{"objectId": "\#(b)", "latitude": 0.1, "longitude": 0.1}"#) == 1)
            #expect(try await run("onexit", #"{"objectId": "\#(b)"}"#) == 1, "its saved position is outside")

            let events = try await cluster.send(.GET, "/geo/fences/zone/events?pagesize=100", key: .serverCode)
            let recorded = events.items.map { "\($0["event"] as? String ?? "?") \($0["objectId"] as? String ?? "-")" }
            let expected = [
                ["onenter \(a)", "onenter \(b)"], ["onstay \(a)", "onstay \(b)"], ["onexit \(b)"], ["onenter \(c)"],
                ["onstay \(a)", "onstay \(c)"], ["onexit \(a)"], ["onenter \(b)"], ["onexit \(b)"],
            ]
            var offset = 0
            for group in expected {
                #expect(Set(recorded.dropFirst(offset).prefix(group.count)) == Set(group), "\(recorded)")
                offset += group.count
            }
            #expect(recorded.count == offset, "\(recorded)")
            #expect(try await cluster.send(.GET, "/geo/fences/zone/events").status == 403)
        }
    }

    @Test func staysCountOnlyAfterTheFencesStayDuration() async throws {
        try await TestCluster.shared { cluster async throws in
            let fence =
                #"{"name": "slow", "type": "RECT", "onStayDuration": 3600, "nodes": [{"latitude": 10, "longitude": 170}, {"latitude": -10, "longitude": -170}], "actions": {"onenter": {}, "onstay": {}}}"#
            #expect(try await cluster.send(.POST, "/geo/fences", fence, key: .serverCode).status == 200)
            try await cluster.savePoint(0, 179.5)
            try await cluster.savePoint(0, -175)
            try await cluster.savePoint(0, 0)
            #expect(
                try await cluster.send(.POST, "/geo/fence/onenter?geoFence=slow").text == "2", "across the antimeridian"
            )
            #expect(
                try await cluster.send(.POST, "/geo/fence/onstay?geoFence=slow").text == "0", "an hour has not passed")
        }
    }
}
