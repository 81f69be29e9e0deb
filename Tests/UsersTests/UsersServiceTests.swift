import UsersService
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(2))) struct UsersServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(UsersService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(UsersService.self)
    }

    @Test func unknownEndpointsAnswerWithAnEnvelopeNamingTheService() async throws {
        try await BackendChecks.unknownEndpointNamesService(UsersService.self)
    }
}
