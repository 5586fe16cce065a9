import { describe, expect, it } from 'vitest';
import { cardBrandCode } from '../../src/schema/card-brand.ts';
import { graphql } from '../generated/index.ts';
import { CreateCard } from '../support/documents.ts';
import { member, useStack } from '../support/fixtures.ts';

const CardBrands = graphql(`
  query CB_CardBrands($cardId: String!) {
    card(cardId: $cardId) {
      __typename
      ... on QueryCardSuccess { data { brand brandCode attributes { brand brandCode } } }
    }
  }
`);

describe('CardBrand: one vocabulary for a brand', () => {
  it('reads either upstream spelling of a brand as the same value', () => {
    const names = [
      'visa',
      'VISA',
      'mastercard',
      'MASTERCARD',
      'amex',
      'AMERICAN EXPRESS',
      'discover',
      'diners',
      'DINERS CLUB',
      'jcb',
      'China UnionPay',
      'maestro',
      'Elo',
      '',
      null,
    ];
    expect(names.map(cardBrandCode)).toEqual([
      'VISA',
      'VISA',
      'MASTERCARD',
      'MASTERCARD',
      'AMERICAN_EXPRESS',
      'AMERICAN_EXPRESS',
      'DISCOVER',
      'DINERS_CLUB',
      'DINERS_CLUB',
      'JCB',
      'UNIONPAY',
      'MAESTRO',
      'OTHER',
      null,
      null,
    ]);
  });

  describe('through GraphQL', () => {
    const t = useStack();

    it.each([
      ['4111111111111111', 'visa', 'VISA', 'VISA'],
      ['5555555555554444', 'mastercard', 'MASTERCARD', 'MASTERCARD'],
      ['378282246310005', 'amex', 'AMERICAN EXPRESS', 'AMERICAN_EXPRESS'],
    ])(
      'a %s card: brand %s, its attributes %s, brandCode %s on both',
      async (pan, cardBrand, attributesBrand, code) => {
        const created = await t.stack.execute(
          CreateCard,
          { input: { pan, expMonth: 12, expYear: 30 } },
          t.vault1Token,
        );
        const { cardId } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
        const read = await t.stack.execute(CardBrands, { cardId }, t.vault1Token);
        expect(read.errors).toBeUndefined();
        expect(member(read.data?.card, 'QueryCardSuccess').data).toEqual({
          brand: cardBrand,
          brandCode: code,
          attributes: { brand: attributesBrand, brandCode: code },
        });
      },
    );
  });
});
