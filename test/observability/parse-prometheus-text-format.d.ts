// Types of parse-prometheus-text-format 1.1.1 (prom2json output), which ships none.
declare module 'parse-prometheus-text-format' {
  /** One sample of a counter, gauge or untyped family. */
  export interface PrometheusSample {
    value: string;
    labels?: Record<string, string>;
  }
  /** One labelled histogram. */
  export interface PrometheusHistogramSample {
    buckets: Record<string, string>;
    count: string;
    sum: string;
    labels?: Record<string, string>;
  }
  /** One metric family. */
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: (PrometheusSample | PrometheusHistogramSample)[];
  }
  /** Parses the Prometheus text exposition format; throws on malformed input. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
