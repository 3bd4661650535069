// The few functions of jStat (the `jstat` package, MIT) the A/B statistics use; it ships no types.
declare module "jstat" {
  interface Distribution2 {
    cdf(x: number, a: number, b: number): number;
    inv(p: number, a: number, b: number): number;
  }
  interface Distribution1 {
    cdf(x: number, dof: number): number;
    inv(p: number, dof: number): number;
  }
  const jStat: { normal: Distribution2; studentt: Distribution1 };
  export default jStat;
}
