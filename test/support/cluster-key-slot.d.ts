// cluster-key-slot ships no types: Redis Cluster's hash slot of a key (CRC16 of its hash tag, or of
// the whole key, modulo 16384), the function ioredis' Cluster client routes by.
declare module 'cluster-key-slot' {
  function calculateSlot(key: string | Buffer): number;
  namespace calculateSlot {
    /** The keys' common slot, or -1 when they are not all in one slot. */
    function generateMulti(keys: ReadonlyArray<string | Buffer>): number;
  }
  export default calculateSlot;
}
