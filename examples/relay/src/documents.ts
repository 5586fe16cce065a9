import { graphql } from 'relay-runtime';

/**
 * The Relay documents of the example, read by relay-compiler (`npm run relay`), never executed:
 * `graphql` tags are compiled to the artifacts in ./__generated__, which the client code imports.
 * Each paged list is a fragment on `Query` with `@refetchable` (the pagination query Relay
 * generates) and `@connection` on the field that returns the connection, which is what
 * `usePaginationFragment` pages.
 */

/** Card events of one card, oldest first, `count` a page. */
export const cardEventHistoryFragment = graphql`
  fragment CardEventHistory_query on Query
  @refetchable(queryName: "CardEventHistoryPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
    cardId: { type: "String" }
  ) {
    cardEventHistory(first: $count, after: $cursor, cardId: $cardId)
      @connection(key: "CardEventHistory_cardEventHistory") {
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          id
          type
          cardId
          timestamp
          ...CardEventDetails_event
        }
      }
    }
  }
`;

/** The first page of {@link cardEventHistoryFragment}. */
export const cardEventHistoryQuery = graphql`
  query CardEventHistoryQuery($cardId: String, $count: Int) {
    ...CardEventHistory_query @arguments(cardId: $cardId, count: $count)
  }
`;

/** One card event, refetchable on its own through `node(id:)`. */
export const cardEventDetailsFragment = graphql`
  fragment CardEventDetails_event on CardEvent @refetchable(queryName: "CardEventDetailsRefetchQuery") {
    id
    type
    source
    outOfOrder
  }
`;

/** Network token events of one PAN alias. */
export const networkTokenEventHistoryFragment = graphql`
  fragment NetworkTokenEventHistory_query on Query
  @refetchable(queryName: "NetworkTokenEventHistoryPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
    panAlias: { type: "String" }
  ) {
    networkTokenEventHistory(first: $count, after: $cursor, panAlias: $panAlias)
      @connection(key: "NetworkTokenEventHistory_networkTokenEventHistory") {
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          id
          type
          panAlias
          ...NetworkTokenEventDetails_event
        }
      }
    }
  }
`;

/** One network token event, refetchable on its own through `node(id:)`. */
export const networkTokenEventDetailsFragment = graphql`
  fragment NetworkTokenEventDetails_event on NetworkTokenEvent
  @refetchable(queryName: "NetworkTokenEventDetailsRefetchQuery") {
    id
    state
    stateName
  }
`;

/** Signed notifications the gateway could not map (operators). */
export const unmappedNotificationHistoryFragment = graphql`
  fragment UnmappedNotificationHistory_query on Query
  @refetchable(queryName: "UnmappedNotificationHistoryPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
    unmappedNotificationHistory(first: $count, after: $cursor)
      @connection(key: "UnmappedNotificationHistory_unmappedNotificationHistory") {
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          id
          reason
          receivedAt
        }
      }
    }
  }
`;

/** Members of an organization. */
export const organizationMembersFragment = graphql`
  fragment OrganizationMembers_query on Query
  @refetchable(queryName: "OrganizationMembersPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
    organizationId: { type: "String!" }
  ) {
    organizationMembers(organizationId: $organizationId, first: $count, after: $cursor)
      @connection(key: "OrganizationMembers_organizationMembers") {
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          id
          name
          role
        }
      }
    }
  }
`;

/** The first page of {@link organizationMembersFragment}. */
export const organizationMembersQuery = graphql`
  query OrganizationMembersQuery($organizationId: String!, $count: Int) {
    ...OrganizationMembers_query @arguments(organizationId: $organizationId, count: $count)
  }
`;

/** Pending invitations of an organization. */
export const organizationInvitesFragment = graphql`
  fragment OrganizationInvites_query on Query
  @refetchable(queryName: "OrganizationInvitesPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
    organizationId: { type: "String!" }
  ) {
    organizationInvites(organizationId: $organizationId, first: $count, after: $cursor)
      @connection(key: "OrganizationInvites_organizationInvites") {
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          id
          emailAddress
          state
        }
      }
    }
  }
`;
