import { describe, expect, it } from 'vitest';
import { traceUrl } from './trace-link';

const ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('traceUrl (#48)', () => {
  it('puts the trace id into the template', () => {
    expect(traceUrl('https://jaeger.example.com/trace/{traceId}', ID)).toBe(`https://jaeger.example.com/trace/${ID}`);
    expect(traceUrl('https://g.example.com/explore?q=%22{traceId}%22&again={traceId}', ID)).toBe(`https://g.example.com/explore?q=%22${ID}%22&again=${ID}`);
  });

  it('gives no link without a template or a trace id, or for anything but http(s)', () => {
    expect(traceUrl(null, ID)).toBeNull();
    expect(traceUrl('https://jaeger.example.com/trace/{traceId}', null)).toBeNull();
    expect(traceUrl('https://jaeger.example.com/trace/{traceId}', 'not-hex')).toBeNull();
    expect(traceUrl('javascript:alert(1)//{traceId}', ID)).toBeNull();
  });
});
