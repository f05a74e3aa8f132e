import { describe, expect, it } from 'vitest';
import {
  formatBearerChallenge,
  protectedResourceMetadata,
} from '../../control-plane/identity/index.js';

describe('formatBearerChallenge', () => {
  it('escapes quotes and backslashes in quoted parameters', () => {
    expect(formatBearerChallenge({ resourceMetadataUrl: 'https://a.example/x"y\\z' })).toBe(
      'Bearer resource_metadata="https://a.example/x\\"y\\\\z"',
    );
  });

  it('keeps error_description within the RFC 6750 character set', () => {
    expect(
      formatBearerChallenge({
        resourceMetadataUrl: 'https://a.example/m',
        error: 'invalid_token',
        errorDescription: 'bad "token"\\ é\nnext',
      }),
    ).toBe(
      `Bearer resource_metadata="https://a.example/m", error="invalid_token", error_description="bad 'token'/ ??next"`,
    );
  });
});

describe('protectedResourceMetadata', () => {
  it('builds the RFC 9728 document from the public address', () => {
    expect(
      protectedResourceMetadata({
        address: 'https://demo.example.com/',
        issuer: 'https://as.example.com',
      }),
    ).toEqual({
      resource: 'https://demo.example.com/mcp',
      authorization_servers: ['https://as.example.com'],
      bearer_methods_supported: ['header'],
    });
  });

  it('advertises scopes when given', () => {
    const document = protectedResourceMetadata({
      address: 'http://demo.localhost:8080',
      issuer: 'http://127.0.0.1:9000',
      scopes: ['mcp:tools'],
    });
    expect(document.scopes_supported).toEqual(['mcp:tools']);
  });
});
