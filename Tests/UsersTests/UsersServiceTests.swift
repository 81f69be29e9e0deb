import Configuration
import ServiceRuntime
import TestSupport
import Testing
import UsersService

@Suite(.timeLimit(.minutes(20))) struct UsersServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(UsersService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(UsersService.self)
    }

    @Test func servesItsManifestToTheGatewayOnly() async throws {
        try await BackendChecks.servesItsManifestToTheGatewayOnly(UsersService.self)
    }

    @Test func aBcryptCostOutsideItsRangeStopsStartUp() throws {
        func cost(_ value: String?) throws -> Int {
            let environment = value.map { ["BAAS_USERS_BCRYPT_COST": $0] } ?? [:]
            return try UsersService.bcryptCost(
                RuntimeConfiguration(service: .users, reader: .fromEnvironment(environment)))
        }
        #expect(try cost(nil) == 11)
        #expect(try cost("4") == 4)
        #expect(throws: UsageError.self) { try cost("3") }
        #expect(throws: UsageError.self) { try cost("40") }
    }
}
