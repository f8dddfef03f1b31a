var Gt=Object.defineProperty;var Kt=(r,t,e)=>t in r?Gt(r,t,{enumerable:!0,configurable:!0,writable:!0,value:e}):r[t]=e;var y=(r,t,e)=>Kt(r,typeof t!="symbol"?t+"":t,e);var q=globalThis,F=q.ShadowRoot&&(q.ShadyCSS===void 0||q.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,rt=Symbol(),mt=new WeakMap,N=class{constructor(t,e,s){if(this._$cssResult$=!0,s!==rt)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=t,this.t=e}get styleSheet(){let t=this.o,e=this.t;if(F&&t===void 0){let s=e!==void 0&&e.length===1;s&&(t=mt.get(e)),t===void 0&&((this.o=t=new CSSStyleSheet).replaceSync(this.cssText),s&&mt.set(e,t))}return t}toString(){return this.cssText}},gt=r=>new N(typeof r=="string"?r:r+"",void 0,rt),D=(r,...t)=>{let e=r.length===1?r[0]:t.reduce((s,i,n)=>s+(o=>{if(o._$cssResult$===!0)return o.cssText;if(typeof o=="number")return o;throw Error("Value passed to 'css' function must be a 'css' function result: "+o+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(i)+r[n+1],r[0]);return new N(e,r,rt)},ft=(r,t)=>{if(F)r.adoptedStyleSheets=t.map(e=>e instanceof CSSStyleSheet?e:e.styleSheet);else for(let e of t){let s=document.createElement("style"),i=q.litNonce;i!==void 0&&s.setAttribute("nonce",i),s.textContent=e.cssText,r.appendChild(s)}},ot=F?r=>r:r=>r instanceof CSSStyleSheet?(t=>{let e="";for(let s of t.cssRules)e+=s.cssText;return gt(e)})(r):r;var{is:Yt,defineProperty:Jt,getOwnPropertyDescriptor:Zt,getOwnPropertyNames:Qt,getOwnPropertySymbols:Xt,getPrototypeOf:te}=Object,V=globalThis,$t=V.trustedTypes,ee=$t?$t.emptyScript:"",se=V.reactiveElementPolyfillSupport,R=(r,t)=>r,nt={toAttribute(r,t){switch(t){case Boolean:r=r?ee:null;break;case Object:case Array:r=r==null?r:JSON.stringify(r)}return r},fromAttribute(r,t){let e=r;switch(t){case Boolean:e=r!==null;break;case Number:e=r===null?null:Number(r);break;case Object:case Array:try{e=JSON.parse(r)}catch{e=null}}return e}},vt=(r,t)=>!Yt(r,t),yt={attribute:!0,type:String,converter:nt,reflect:!1,useDefault:!1,hasChanged:vt};Symbol.metadata??=Symbol("metadata"),V.litPropertyMetadata??=new WeakMap;var v=class extends HTMLElement{static addInitializer(t){this._$Ei(),(this.l??=[]).push(t)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(t,e=yt){if(e.state&&(e.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(t)&&((e=Object.create(e)).wrapped=!0),this.elementProperties.set(t,e),!e.noAccessor){let s=Symbol(),i=this.getPropertyDescriptor(t,s,e);i!==void 0&&Jt(this.prototype,t,i)}}static getPropertyDescriptor(t,e,s){let{get:i,set:n}=Zt(this.prototype,t)??{get(){return this[e]},set(o){this[e]=o}};return{get:i,set(o){let c=i?.call(this);n?.call(this,o),this.requestUpdate(t,c,s)},configurable:!0,enumerable:!0}}static getPropertyOptions(t){return this.elementProperties.get(t)??yt}static _$Ei(){if(this.hasOwnProperty(R("elementProperties")))return;let t=te(this);t.finalize(),t.l!==void 0&&(this.l=[...t.l]),this.elementProperties=new Map(t.elementProperties)}static finalize(){if(this.hasOwnProperty(R("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(R("properties"))){let e=this.properties,s=[...Qt(e),...Xt(e)];for(let i of s)this.createProperty(i,e[i])}let t=this[Symbol.metadata];if(t!==null){let e=litPropertyMetadata.get(t);if(e!==void 0)for(let[s,i]of e)this.elementProperties.set(s,i)}this._$Eh=new Map;for(let[e,s]of this.elementProperties){let i=this._$Eu(e,s);i!==void 0&&this._$Eh.set(i,e)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(t){let e=[];if(Array.isArray(t)){let s=new Set(t.flat(1/0).reverse());for(let i of s)e.unshift(ot(i))}else t!==void 0&&e.push(ot(t));return e}static _$Eu(t,e){let s=e.attribute;return s===!1?void 0:typeof s=="string"?s:typeof t=="string"?t.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(t=>this.enableUpdating=t),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(t=>t(this))}addController(t){(this._$EO??=new Set).add(t),this.renderRoot!==void 0&&this.isConnected&&t.hostConnected?.()}removeController(t){this._$EO?.delete(t)}_$E_(){let t=new Map,e=this.constructor.elementProperties;for(let s of e.keys())this.hasOwnProperty(s)&&(t.set(s,this[s]),delete this[s]);t.size>0&&(this._$Ep=t)}createRenderRoot(){let t=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return ft(t,this.constructor.elementStyles),t}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(t=>t.hostConnected?.())}enableUpdating(t){}disconnectedCallback(){this._$EO?.forEach(t=>t.hostDisconnected?.())}attributeChangedCallback(t,e,s){this._$AK(t,s)}_$ET(t,e){let s=this.constructor.elementProperties.get(t),i=this.constructor._$Eu(t,s);if(i!==void 0&&s.reflect===!0){let n=(s.converter?.toAttribute!==void 0?s.converter:nt).toAttribute(e,s.type);this._$Em=t,n==null?this.removeAttribute(i):this.setAttribute(i,n),this._$Em=null}}_$AK(t,e){let s=this.constructor,i=s._$Eh.get(t);if(i!==void 0&&this._$Em!==i){let n=s.getPropertyOptions(i),o=typeof n.converter=="function"?{fromAttribute:n.converter}:n.converter?.fromAttribute!==void 0?n.converter:nt;this._$Em=i;let c=o.fromAttribute(e,n.type);this[i]=c??this._$Ej?.get(i)??c,this._$Em=null}}requestUpdate(t,e,s,i=!1,n){if(t!==void 0){let o=this.constructor;if(i===!1&&(n=this[t]),s??=o.getPropertyOptions(t),!((s.hasChanged??vt)(n,e)||s.useDefault&&s.reflect&&n===this._$Ej?.get(t)&&!this.hasAttribute(o._$Eu(t,s))))return;this.C(t,e,s)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(t,e,{useDefault:s,reflect:i,wrapped:n},o){s&&!(this._$Ej??=new Map).has(t)&&(this._$Ej.set(t,o??e??this[t]),n!==!0||o!==void 0)||(this._$AL.has(t)||(this.hasUpdated||s||(e=void 0),this._$AL.set(t,e)),i===!0&&this._$Em!==t&&(this._$Eq??=new Set).add(t))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(e){Promise.reject(e)}let t=this.scheduleUpdate();return t!=null&&await t,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[i,n]of this._$Ep)this[i]=n;this._$Ep=void 0}let s=this.constructor.elementProperties;if(s.size>0)for(let[i,n]of s){let{wrapped:o}=n,c=this[i];o!==!0||this._$AL.has(i)||c===void 0||this.C(i,void 0,n,c)}}let t=!1,e=this._$AL;try{t=this.shouldUpdate(e),t?(this.willUpdate(e),this._$EO?.forEach(s=>s.hostUpdate?.()),this.update(e)):this._$EM()}catch(s){throw t=!1,this._$EM(),s}t&&this._$AE(e)}willUpdate(t){}_$AE(t){this._$EO?.forEach(e=>e.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(t)),this.updated(t)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(t){return!0}update(t){this._$Eq&&=this._$Eq.forEach(e=>this._$ET(e,this[e])),this._$EM()}updated(t){}firstUpdated(t){}};v.elementStyles=[],v.shadowRootOptions={mode:"open"},v[R("elementProperties")]=new Map,v[R("finalized")]=new Map,se?.({ReactiveElement:v}),(V.reactiveElementVersions??=[]).push("2.1.2");var lt=globalThis,bt=r=>r,j=lt.trustedTypes,wt=j?j.createPolicy("lit-html",{createHTML:r=>r}):void 0,ht="$lit$",b=`lit$${Math.random().toFixed(9).slice(2)}$`,ct="?"+b,ie=`<${ct}>`,k=document,z=()=>k.createComment(""),U=r=>r===null||typeof r!="object"&&typeof r!="function",dt=Array.isArray,Ct=r=>dt(r)||typeof r?.[Symbol.iterator]=="function",at=`[ 	
\f\r]`,H=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,xt=/-->/g,At=/>/g,A=RegExp(`>|${at}(?:([^\\s"'>=/]+)(${at}*=${at}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),St=/'/g,kt=/"/g,Pt=/^(?:script|style|textarea|title)$/i,pt=r=>(t,...e)=>({_$litType$:r,strings:t,values:e}),a=pt(1),fe=pt(2),$e=pt(3),w=Symbol.for("lit-noChange"),h=Symbol.for("lit-nothing"),Et=new WeakMap,S=k.createTreeWalker(k,129);function Tt(r,t){if(!dt(r)||!r.hasOwnProperty("raw"))throw Error("invalid template strings array");return wt!==void 0?wt.createHTML(t):t}var Ot=(r,t)=>{let e=r.length-1,s=[],i,n=t===2?"<svg>":t===3?"<math>":"",o=H;for(let c=0;c<e;c++){let l=r[c],p,m,d=-1,_=0;for(;_<l.length&&(o.lastIndex=_,m=o.exec(l),m!==null);)_=o.lastIndex,o===H?m[1]==="!--"?o=xt:m[1]!==void 0?o=At:m[2]!==void 0?(Pt.test(m[2])&&(i=RegExp("</"+m[2],"g")),o=A):m[3]!==void 0&&(o=A):o===A?m[0]===">"?(o=i??H,d=-1):m[1]===void 0?d=-2:(d=o.lastIndex-m[2].length,p=m[1],o=m[3]===void 0?A:m[3]==='"'?kt:St):o===kt||o===St?o=A:o===xt||o===At?o=H:(o=A,i=void 0);let u=o===A&&r[c+1].startsWith("/>")?" ":"";n+=o===H?l+ie:d>=0?(s.push(p),l.slice(0,d)+ht+l.slice(d)+b+u):l+b+(d===-2?c:u)}return[Tt(r,n+(r[e]||"<?>")+(t===2?"</svg>":t===3?"</math>":"")),s]},I=class r{constructor({strings:t,_$litType$:e},s){let i;this.parts=[];let n=0,o=0,c=t.length-1,l=this.parts,[p,m]=Ot(t,e);if(this.el=r.createElement(p,s),S.currentNode=this.el.content,e===2||e===3){let d=this.el.content.firstChild;d.replaceWith(...d.childNodes)}for(;(i=S.nextNode())!==null&&l.length<c;){if(i.nodeType===1){if(i.hasAttributes())for(let d of i.getAttributeNames())if(d.endsWith(ht)){let _=m[o++],u=i.getAttribute(d).split(b),g=/([.?@])?(.*)/.exec(_);l.push({type:1,index:n,name:g[2],strings:u,ctor:g[1]==="."?K:g[1]==="?"?Y:g[1]==="@"?J:C}),i.removeAttribute(d)}else d.startsWith(b)&&(l.push({type:6,index:n}),i.removeAttribute(d));if(Pt.test(i.tagName)){let d=i.textContent.split(b),_=d.length-1;if(_>0){i.textContent=j?j.emptyScript:"";for(let u=0;u<_;u++)i.append(d[u],z()),S.nextNode(),l.push({type:2,index:++n});i.append(d[_],z())}}}else if(i.nodeType===8)if(i.data===ct)l.push({type:2,index:n});else{let d=-1;for(;(d=i.data.indexOf(b,d+1))!==-1;)l.push({type:7,index:n}),d+=b.length-1}n++}}static createElement(t,e){let s=k.createElement("template");return s.innerHTML=t,s}};function E(r,t,e=r,s){if(t===w)return t;let i=s!==void 0?e._$Co?.[s]:e._$Cl,n=U(t)?void 0:t._$litDirective$;return i?.constructor!==n&&(i?._$AO?.(!1),n===void 0?i=void 0:(i=new n(r),i._$AT(r,e,s)),s!==void 0?(e._$Co??=[])[s]=i:e._$Cl=i),i!==void 0&&(t=E(r,i._$AS(r,t.values),i,s)),t}var G=class{constructor(t,e){this._$AV=[],this._$AN=void 0,this._$AD=t,this._$AM=e}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(t){let{el:{content:e},parts:s}=this._$AD,i=(t?.creationScope??k).importNode(e,!0);S.currentNode=i;let n=S.nextNode(),o=0,c=0,l=s[0];for(;l!==void 0;){if(o===l.index){let p;l.type===2?p=new P(n,n.nextSibling,this,t):l.type===1?p=new l.ctor(n,l.name,l.strings,this,t):l.type===6&&(p=new Z(n,this,t)),this._$AV.push(p),l=s[++c]}o!==l?.index&&(n=S.nextNode(),o++)}return S.currentNode=k,i}p(t){let e=0;for(let s of this._$AV)s!==void 0&&(s.strings!==void 0?(s._$AI(t,s,e),e+=s.strings.length-2):s._$AI(t[e])),e++}},P=class r{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(t,e,s,i){this.type=2,this._$AH=h,this._$AN=void 0,this._$AA=t,this._$AB=e,this._$AM=s,this.options=i,this._$Cv=i?.isConnected??!0}get parentNode(){let t=this._$AA.parentNode,e=this._$AM;return e!==void 0&&t?.nodeType===11&&(t=e.parentNode),t}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(t,e=this){t=E(this,t,e),U(t)?t===h||t==null||t===""?(this._$AH!==h&&this._$AR(),this._$AH=h):t!==this._$AH&&t!==w&&this._(t):t._$litType$!==void 0?this.$(t):t.nodeType!==void 0?this.T(t):Ct(t)?this.k(t):this._(t)}O(t){return this._$AA.parentNode.insertBefore(t,this._$AB)}T(t){this._$AH!==t&&(this._$AR(),this._$AH=this.O(t))}_(t){this._$AH!==h&&U(this._$AH)?this._$AA.nextSibling.data=t:this.T(k.createTextNode(t)),this._$AH=t}$(t){let{values:e,_$litType$:s}=t,i=typeof s=="number"?this._$AC(t):(s.el===void 0&&(s.el=I.createElement(Tt(s.h,s.h[0]),this.options)),s);if(this._$AH?._$AD===i)this._$AH.p(e);else{let n=new G(i,this),o=n.u(this.options);n.p(e),this.T(o),this._$AH=n}}_$AC(t){let e=Et.get(t.strings);return e===void 0&&Et.set(t.strings,e=new I(t)),e}k(t){dt(this._$AH)||(this._$AH=[],this._$AR());let e=this._$AH,s,i=0;for(let n of t)i===e.length?e.push(s=new r(this.O(z()),this.O(z()),this,this.options)):s=e[i],s._$AI(n),i++;i<e.length&&(this._$AR(s&&s._$AB.nextSibling,i),e.length=i)}_$AR(t=this._$AA.nextSibling,e){for(this._$AP?.(!1,!0,e);t!==this._$AB;){let s=bt(t).nextSibling;bt(t).remove(),t=s}}setConnected(t){this._$AM===void 0&&(this._$Cv=t,this._$AP?.(t))}},C=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(t,e,s,i,n){this.type=1,this._$AH=h,this._$AN=void 0,this.element=t,this.name=e,this._$AM=i,this.options=n,s.length>2||s[0]!==""||s[1]!==""?(this._$AH=Array(s.length-1).fill(new String),this.strings=s):this._$AH=h}_$AI(t,e=this,s,i){let n=this.strings,o=!1;if(n===void 0)t=E(this,t,e,0),o=!U(t)||t!==this._$AH&&t!==w,o&&(this._$AH=t);else{let c=t,l,p;for(t=n[0],l=0;l<n.length-1;l++)p=E(this,c[s+l],e,l),p===w&&(p=this._$AH[l]),o||=!U(p)||p!==this._$AH[l],p===h?t=h:t!==h&&(t+=(p??"")+n[l+1]),this._$AH[l]=p}o&&!i&&this.j(t)}j(t){t===h?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,t??"")}},K=class extends C{constructor(){super(...arguments),this.type=3}j(t){this.element[this.name]=t===h?void 0:t}},Y=class extends C{constructor(){super(...arguments),this.type=4}j(t){this.element.toggleAttribute(this.name,!!t&&t!==h)}},J=class extends C{constructor(t,e,s,i,n){super(t,e,s,i,n),this.type=5}_$AI(t,e=this){if((t=E(this,t,e,0)??h)===w)return;let s=this._$AH,i=t===h&&s!==h||t.capture!==s.capture||t.once!==s.once||t.passive!==s.passive,n=t!==h&&(s===h||i);i&&this.element.removeEventListener(this.name,this,s),n&&this.element.addEventListener(this.name,this,t),this._$AH=t}handleEvent(t){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,t):this._$AH.handleEvent(t)}},Z=class{constructor(t,e,s){this.element=t,this.type=6,this._$AN=void 0,this._$AM=e,this.options=s}get _$AU(){return this._$AM._$AU}_$AI(t){E(this,t)}},Mt={M:ht,P:b,A:ct,C:1,L:Ot,R:G,D:Ct,V:E,I:P,H:C,N:Y,U:J,B:K,F:Z},re=lt.litHtmlPolyfillSupport;re?.(I,P),(lt.litHtmlVersions??=[]).push("3.3.3");var Nt=(r,t,e)=>{let s=e?.renderBefore??t,i=s._$litPart$;if(i===void 0){let n=e?.renderBefore??null;s._$litPart$=i=new P(t.insertBefore(z(),n),n,void 0,e??{})}return i._$AI(r),i};var ut=globalThis,f=class extends v{constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let t=super.createRenderRoot();return this.renderOptions.renderBefore??=t.firstChild,t}update(t){let e=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(t),this._$Do=Nt(e,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return w}};f._$litElement$=!0,f.finalized=!0,ut.litElementHydrateSupport?.({LitElement:f});var oe=ut.litElementPolyfillSupport;oe?.({LitElement:f});(ut.litElementVersions??=[]).push("4.2.2");var Dt={ATTRIBUTE:1,CHILD:2,PROPERTY:3,BOOLEAN_ATTRIBUTE:4,EVENT:5,ELEMENT:6},Rt=r=>(...t)=>({_$litDirective$:r,values:t}),Q=class{constructor(t){}get _$AU(){return this._$AM._$AU}_$AT(t,e,s){this._$Ct=t,this._$AM=e,this._$Ci=s}_$AS(t,e){return this.update(t,e)}update(t,e){return this.render(...e)}};var{I:ne}=Mt,Ht=r=>r;var zt=()=>document.createComment(""),T=(r,t,e)=>{let s=r._$AA.parentNode,i=t===void 0?r._$AB:t._$AA;if(e===void 0){let n=s.insertBefore(zt(),i),o=s.insertBefore(zt(),i);e=new ne(n,o,r,r.options)}else{let n=e._$AB.nextSibling,o=e._$AM,c=o!==r;if(c){let l;e._$AQ?.(r),e._$AM=r,e._$AP!==void 0&&(l=r._$AU)!==o._$AU&&e._$AP(l)}if(n!==i||c){let l=e._$AA;for(;l!==n;){let p=Ht(l).nextSibling;Ht(s).insertBefore(l,i),l=p}}}return e},x=(r,t,e=r)=>(r._$AI(t,e),r),ae={},Ut=(r,t=ae)=>r._$AH=t,It=r=>r._$AH,X=r=>{r._$AR(),r._$AA.remove()};var Wt=(r,t,e)=>{let s=new Map;for(let i=t;i<=e;i++)s.set(r[i],i);return s},Lt=Rt(class extends Q{constructor(r){if(super(r),r.type!==Dt.CHILD)throw Error("repeat() can only be used in text expressions")}dt(r,t,e){let s;e===void 0?e=t:t!==void 0&&(s=t);let i=[],n=[],o=0;for(let c of r)i[o]=s?s(c,o):o,n[o]=e(c,o),o++;return{values:n,keys:i}}render(r,t,e){return this.dt(r,t,e).values}update(r,[t,e,s]){let i=It(r),{values:n,keys:o}=this.dt(t,e,s);if(!Array.isArray(i))return this.ut=o,n;let c=this.ut??=[],l=[],p,m,d=0,_=i.length-1,u=0,g=n.length-1;for(;d<=_&&u<=g;)if(i[d]===null)d++;else if(i[_]===null)_--;else if(c[d]===o[u])l[u]=x(i[d],n[u]),d++,u++;else if(c[_]===o[g])l[g]=x(i[_],n[g]),_--,g--;else if(c[d]===o[g])l[g]=x(i[d],n[g]),T(r,l[g+1],i[d]),d++,g--;else if(c[_]===o[u])l[u]=x(i[_],n[u]),T(r,i[d],i[_]),_--,u++;else if(p===void 0&&(p=Wt(o,u,g),m=Wt(c,d,_)),p.has(c[d]))if(p.has(c[_])){let $=m.get(o[u]),it=$!==void 0?i[$]:null;if(it===null){let _t=T(r,i[d]);x(_t,n[u]),l[u]=_t}else l[u]=x(it,n[u]),T(r,i[d],it),i[$]=null;u++}else X(i[_]),_--;else X(i[d]),d++;for(;u<=g;){let $=T(r,l[g+1]);x($,n[u]),l[u++]=$}for(;d<=_;){let $=i[d++];$!==null&&X($)}return this.ut=o,Ut(r,l),w}});async function tt(r,t,e,s,i,n){let o=[],c=null,l=0;do{let p=await r.callWS(c?{...t,cursor:c}:t);if(!n())return null;o.push(...p[e]),c=p.cursor,l=p.total}while(c&&o.length<Math.max(i,s()));return{rows:o,cursor:c,total:l}}function et(r,t){let e=new Set(r.map(s=>s.id));return[...r,...t.filter(s=>!e.has(s.id))]}function Bt(r,t){let e=new Set(t.map(i=>i.id)),s=new Set([...r].filter(i=>e.has(i)));return{kept:s,dropped:r.size-s.size}}var st={en:{importPaste:"Paste memories",importFile:"Or upload a file",importFormat:"Format",importDetect:"Tell from the content",importSource:"Where they come from (chatgpt, claude\u2026)",importPreview:"Preview",importFormatFound:"Read as",importTotal:"Entries",importNew:"New",importDuplicates:"Already here",importSupersedes:"Replace a near duplicate",importHistory:"History (replaced or forgotten)",importSecrets:"Hold a code or password",importOwners:"Whose they will be",importNoOwner:"No owner in the file",importDone:"Imported {count} memories; {duplicates} were already here.",importProgress:"{done} of {total} written\u2026",format_assist_memory:"Assist Memory export (memories.json)",format_markdown:"Markdown (MEMORY.md)",format_lines:"One memory a line",format_csv:"CSV with a header",format_mem0:"mem0 or OpenMemory",format_ha_ai_memory:"AI Long Term Memory database",format_home_agent:"Home Agent memory store",title:"Memory",menu:"Menu",search:"Search memories",searchHint:"Type to search by words and meaning",everyone:"Everyone I may see",household:"Household",status:"Status",active:"Active",expiring:"Expiring",archived:"Forgotten",superseded:"Replaced",any:"Any",order:"Order",relevance:"Best match",newest:"Newest",recalled:"Most recalled",owner:"Whose",shown:"{shown} of {total}",more:"Show more",none:"No memories here yet.",loading:"Loading\u2026",close:"Close",add:"Add",import:"Import",edit:"Edit",save:"Save",cancel:"Cancel",text:"Text",overview:"Overview",health:"Database {size} MB \xB7 search by {search} \xB7 {waiting} conversations waiting for digestion \xB7 AI Task {calls} of {cap} calls in the last hour",keywordOnly:"keywords only",profiles:"Profiles",noProfiles:"No profile written yet.",refresh:"Refresh now",forget:"Forget",restore:"Restore",purge:"Erase for good",purgeConfirm:"Erase this memory for good? Its text, its vectors and every copy in the database and the exports are removed; it cannot be restored.",created:"Created",updated:"Updated",expires:"Expires",recalledTimes:"Recalled",lastRecalled:"Last recalled",never:"never",type:"Type",tags:"Tags",origin:"Came from",conversation:"Conversation",replaced:"It replaced",replacedBy:"Replaced by",error:"Something went wrong: {error}",memories:"Memories",conversations:"Conversations",type_fact:"Fact",type_preference:"Preference",type_instruction:"Instruction",type_event:"Event",type_summary:"Summary",type_profile:"Profile",type_other:"Other",origin_tool:"Said to the assistant",origin_digestion:"Digested from a conversation",origin_action:"Added by hand or an action",origin_import:"Imported",filters:"Filters ({count})",tag:"Tag",tagHint:"any tag",from:"From",to:"To",select:"Select memory #{id}",selected:"{count} selected",clearSelection:"Clear selection",selectionDropped:"Unselected {count}: no longer in the list (changed elsewhere).",openGone:"Memory #{id} was closed: it could not be read again ({error}).",purgeManyConfirm:"Erase these {count} memories for good? Their texts, vectors and every copy in the database and the exports are removed; they cannot be restored.",openConversation:"open the conversation",embedding:"Meaning search: {provider} {model}, {state}, {progress}% embedded ({pending} waiting)",connected:"answering",unreachable:"not answering (keyword search meanwhile)",digestion:"Digestion",state_waiting:"Waiting",state_done:"Digested",state_skipped:"Skipped",state_failed:"Failed",reason_empty:"nothing was said",reason_too_short:"too short",reason_device_commands:"only device commands",reason_agent_opted_out:"this agent is left out in the options",reason_device_opted_out:"this device is left out in the options",reason_timeout:"the AI Task did not answer in time",reason_malformed:"the AI Task's answer was not usable",reason_unavailable:"no AI Task entity is available",reason_rate_limited:"the hourly AI Task budget is used up",reason_store:"the database could not be written",conversationsShown:"{shown} of {total} conversations",noConversations:"No conversations captured yet.",conversationLabel:"{time}, {speaker}: {preview}",noWords:"(no words)",messagesCount:"{count} messages",producedCount:"{count} memories",conversation:"Conversation",speaker:"Who spoke",agent:"Agent",device:"Device",started:"Started",retryAt:"Next try",role_assistant:"Assistant",role_tool_result:"Tool",gave:"What it gave",gaveNothing:"No memory came from it (yet).",digestNow:"Digest now",digesting:"Digesting\u2026",eraseConversation:"Erase the conversation",eraseConversationConfirm:"Erase this conversation for good? Its messages are removed from the database, its search index and its vectors; they cannot be brought back. The memories it gave stay (forget them on their own)."},de:{importPaste:"Erinnerungen einf\xFCgen",importFile:"Oder eine Datei hochladen",importFormat:"Format",importDetect:"Am Inhalt erkennen",importSource:"Woher sie kommen (chatgpt, claude\u2026)",importPreview:"Vorschau",importFormatFound:"Gelesen als",importTotal:"Eintr\xE4ge",importNew:"Neu",importDuplicates:"Schon vorhanden",importSupersedes:"Ersetzen eine fast gleiche",importHistory:"Verlauf (ersetzt oder vergessen)",importSecrets:"Enthalten einen Code oder ein Passwort",importOwners:"Wem sie geh\xF6ren werden",importNoOwner:"Ohne Besitzer in der Datei",importDone:"{count} Erinnerungen importiert; {duplicates} waren schon vorhanden.",importProgress:"{done} von {total} geschrieben\u2026",format_assist_memory:"Export von Assist Memory (memories.json)",format_markdown:"Markdown (MEMORY.md)",format_lines:"Eine Erinnerung pro Zeile",format_csv:"CSV mit Kopfzeile",format_mem0:"mem0 oder OpenMemory",format_ha_ai_memory:"Datenbank von AI Long Term Memory",format_home_agent:"Speicher von Home Agent",title:"Ged\xE4chtnis",menu:"Men\xFC",search:"Erinnerungen durchsuchen",searchHint:"Tippen, um nach W\xF6rtern und Bedeutung zu suchen",everyone:"Alle, die ich sehen darf",household:"Haushalt",status:"Status",active:"Aktiv",expiring:"L\xE4uft ab",archived:"Vergessen",superseded:"Ersetzt",any:"Alle",order:"Reihenfolge",relevance:"Beste Treffer",newest:"Neueste",recalled:"Am h\xE4ufigsten abgerufen",owner:"Wessen",shown:"{shown} von {total}",more:"Mehr anzeigen",none:"Hier gibt es noch keine Erinnerungen.",loading:"Wird geladen\u2026",close:"Schlie\xDFen",add:"Hinzuf\xFCgen",import:"Importieren",edit:"Bearbeiten",save:"Speichern",cancel:"Abbrechen",text:"Text",overview:"\xDCbersicht",health:"Datenbank {size} MB \xB7 Suche mit {search} \xB7 {waiting} Gespr\xE4che warten auf die Auswertung \xB7 AI Task {calls} von {cap} Aufrufen in der letzten Stunde",keywordOnly:"nur Stichw\xF6rtern",profiles:"Profile",noProfiles:"Noch kein Profil geschrieben.",refresh:"Jetzt aktualisieren",forget:"Vergessen",restore:"Wiederherstellen",purge:"Endg\xFCltig l\xF6schen",purgeConfirm:"Diese Erinnerung endg\xFCltig l\xF6schen? Ihr Text, ihre Vektoren und jede Kopie in der Datenbank und in den Exporten werden entfernt; sie kann nicht wiederhergestellt werden.",created:"Erstellt",updated:"Ge\xE4ndert",expires:"L\xE4uft ab am",recalledTimes:"Abgerufen",lastRecalled:"Zuletzt abgerufen",never:"nie",type:"Art",tags:"Schlagw\xF6rter",origin:"Herkunft",conversation:"Gespr\xE4ch",replaced:"Sie ersetzte",replacedBy:"Ersetzt durch",error:"Etwas ist schiefgegangen: {error}",memories:"Erinnerungen",conversations:"Gespr\xE4che",type_fact:"Tatsache",type_preference:"Vorliebe",type_instruction:"Anweisung",type_event:"Ereignis",type_summary:"Zusammenfassung",type_profile:"Profil",type_other:"Sonstiges",origin_tool:"Dem Assistenten gesagt",origin_digestion:"Aus einem Gespr\xE4ch ausgewertet",origin_action:"Von Hand oder per Aktion hinzugef\xFCgt",origin_import:"Importiert",filters:"Filter ({count})",tag:"Schlagwort",tagHint:"ein Schlagwort",from:"Von",to:"Bis",select:"Erinnerung #{id} ausw\xE4hlen",selected:"{count} ausgew\xE4hlt",clearSelection:"Auswahl aufheben",selectionDropped:"{count} abgew\xE4hlt: nicht mehr in der Liste (anderswo ge\xE4ndert).",openGone:"Erinnerung #{id} wurde geschlossen: sie lie\xDF sich nicht erneut lesen ({error}).",purgeManyConfirm:"Diese {count} Erinnerungen endg\xFCltig l\xF6schen? Ihre Texte, Vektoren und jede Kopie in der Datenbank und in den Exporten werden entfernt; sie k\xF6nnen nicht wiederhergestellt werden.",openConversation:"Gespr\xE4ch \xF6ffnen",embedding:"Bedeutungssuche: {provider} {model}, {state}, {progress} % eingebettet ({pending} warten)",connected:"antwortet",unreachable:"antwortet nicht (solange nur Stichwortsuche)",digestion:"Auswertung",state_waiting:"Wartet",state_done:"Ausgewertet",state_skipped:"\xDCbersprungen",state_failed:"Fehlgeschlagen",reason_empty:"es wurde nichts gesagt",reason_too_short:"zu kurz",reason_device_commands:"nur Ger\xE4tebefehle",reason_agent_opted_out:"dieser Agent ist in den Optionen ausgenommen",reason_device_opted_out:"dieses Ger\xE4t ist in den Optionen ausgenommen",reason_timeout:"der AI Task hat nicht rechtzeitig geantwortet",reason_malformed:"die Antwort des AI Task war nicht verwendbar",reason_unavailable:"keine AI-Task-Entit\xE4t verf\xFCgbar",reason_rate_limited:"das st\xFCndliche AI-Task-Budget ist aufgebraucht",reason_store:"die Datenbank konnte nicht schreiben",conversationsShown:"{shown} von {total} Gespr\xE4chen",noConversations:"Noch keine Gespr\xE4che aufgezeichnet.",conversationLabel:"{time}, {speaker}: {preview}",noWords:"(keine Worte)",messagesCount:"{count} Nachrichten",producedCount:"{count} Erinnerungen",conversation:"Gespr\xE4ch",speaker:"Wer sprach",agent:"Agent",device:"Ger\xE4t",started:"Begonnen",retryAt:"N\xE4chster Versuch",role_assistant:"Assistent",role_tool_result:"Werkzeug",gave:"Was daraus wurde",gaveNothing:"Daraus ist (noch) keine Erinnerung entstanden.",digestNow:"Jetzt auswerten",digesting:"Wird ausgewertet\u2026",eraseConversation:"Gespr\xE4ch l\xF6schen",eraseConversationConfirm:"Dieses Gespr\xE4ch endg\xFCltig l\xF6schen? Seine Nachrichten werden aus der Datenbank, dem Suchindex und den Vektoren entfernt und k\xF6nnen nicht zur\xFCckgeholt werden. Die Erinnerungen daraus bleiben (vergiss sie einzeln)."}};function qt(r){return r in st.en}function O(r,t,e={}){let i=(st[r?.split("-")[0]]??st.en)[t]??st.en[t]??t;for(let[n,o]of Object.entries(e))i=i.replace(`{${n}}`,String(o));return i}var M=D`
    :host {
      display: block;
      min-height: 100vh;
      background: var(--primary-background-color);
      color: var(--primary-text-color);
      font-family: var(--paper-font-body1_-_font-family, var(--ha-font-family-body, sans-serif));
    }
    header {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: center;
      padding: 12px 16px;
      background: var(--app-header-background-color, var(--primary-color));
      color: var(--app-header-text-color, var(--text-primary-color));
    }
    .menu {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 22px;
      cursor: pointer;
      padding: 4px 8px;
    }
    h1 {
      margin: 0;
      font-size: 20px;
      font-weight: 400;
      flex: 0 0 auto;
    }
    input[type="search"] {
      flex: 1 1 240px;
      min-width: 0;
      padding: 8px 12px;
      border-radius: 8px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font-size: 16px;
    }
    [hidden] {
      display: none !important;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 12px;
    }
    select,
    textarea,
    .editor input,
    .filters input {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    main {
      padding: 8px 16px 32px;
      max-width: 960px;
      margin: 0 auto;
    }
    .count {
      color: var(--secondary-text-color);
      font-size: 14px;
    }
    .list {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .memory {
      width: 100%;
      text-align: start;
      display: flex;
      flex-direction: column;
      gap: 6px;
      padding: 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      cursor: pointer;
    }
    .memory:focus-visible,
    button:focus-visible,
    select:focus-visible,
    input:focus-visible {
      outline: 2px solid var(--primary-color);
      outline-offset: 2px;
    }
    .memory.archived,
    .memory.superseded {
      opacity: 0.7;
    }
    .content {
      overflow-wrap: anywhere;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .chip {
      padding: 0 8px;
      border-radius: 10px;
      background: var(--secondary-background-color);
    }
    .chip.person {
      background: var(--primary-color);
      color: var(--text-primary-color);
    }
    .more,
    .actions button {
      margin-top: 12px;
      padding: 8px 16px;
      border-radius: 8px;
      border: 1px solid var(--primary-color);
      background: transparent;
      color: var(--primary-color);
      font: inherit;
      cursor: pointer;
    }
    .actions button.danger {
      border-color: var(--error-color);
      color: var(--error-color);
    }
    .notice {
      margin: 8px 0;
      color: var(--primary-text-color);
      font-size: 14px;
    }
    .error {
      margin: 8px 16px;
      color: var(--error-color);
    }
    .detail {
      position: fixed;
      inset: auto 0 0 auto;
      top: 0;
      width: min(420px, 100vw);
      overflow-y: auto;
      background: var(--card-background-color);
      color: var(--primary-text-color);
      border-inline-start: 1px solid var(--divider-color);
      box-shadow: var(--ha-card-box-shadow, 0 0 12px rgba(0, 0, 0, 0.3));
      padding-bottom: 24px;
    }
    .detail header {
      justify-content: space-between;
    }
    .detail header button {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 20px;
      cursor: pointer;
    }
    .detail h2 {
      margin: 0;
      font-size: 18px;
      font-weight: 400;
    }
    .full,
    .detail dl,
    .detail h3,
    .chain,
    .actions {
      margin-inline: 16px;
    }
    .full {
      font-size: 16px;
      overflow-wrap: anywhere;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 4px 12px;
      font-size: 14px;
    }
    dt {
      color: var(--secondary-text-color);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    .link {
      border: none;
      background: none;
      color: var(--primary-color);
      text-align: start;
      font: inherit;
      cursor: pointer;
      padding: 2px 0;
    }
    .overview {
      margin: 8px 0;
      padding: 8px 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
    }
    .overview summary {
      cursor: pointer;
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
    }
    .health {
      font-size: 13px;
      color: var(--secondary-text-color);
    }
    .profiles {
      list-style: none;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .profiles li {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
    }
    .editor {
      display: grid;
      gap: 8px;
      margin: 12px 16px;
    }
    .editor label {
      font-size: 14px;
    }
    textarea,
    .editor input {
      font: inherit;
    }
    .add {
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid currentColor;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }

    .tabs {
      display: flex;
      gap: 4px;
      flex: 1 0 100%;
    }
    .tabs button {
      padding: 6px 14px;
      border: none;
      border-bottom: 2px solid transparent;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
      opacity: 0.8;
    }
    .tabs button[aria-selected="true"] {
      border-bottom-color: currentColor;
      opacity: 1;
    }
    .row {
      display: flex;
      gap: 8px;
      align-items: stretch;
    }
    .row input[type="checkbox"] {
      width: 20px;
      height: 20px;
      margin: 14px 0 0;
      flex: 0 0 auto;
      accent-color: var(--primary-color);
    }
    .bulk {
      position: sticky;
      top: 0;
      z-index: 1;
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: center;
      padding: 8px 12px;
      border-radius: 12px;
      background: var(--secondary-background-color);
    }
    .bulk button {
      margin: 0;
    }
    .filters input {
      font: inherit;
      font-size: 14px;
      max-width: 150px;
    }
    .day {
      font-size: 14px;
      font-weight: 500;
      color: var(--secondary-text-color);
      margin: 16px 0 8px;
    }
    .state.failed {
      background: var(--error-color);
      color: var(--text-primary-color);
    }
    .state.done {
      background: var(--success-color, #43a047);
      color: var(--text-primary-color);
    }
    .state.waiting {
      background: var(--warning-color, #ffa600);
      color: var(--text-primary-color);
    }
    .messages {
      list-style: none;
      margin: 12px 16px;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .message {
      padding: 8px 10px;
      border-radius: 10px;
      background: var(--secondary-background-color);
      display: grid;
      gap: 2px;
      overflow-wrap: anywhere;
    }
    .message.user {
      background: var(--card-background-color);
      border: 1px solid var(--divider-color);
    }
    .message.tool_result {
      font-size: 12px;
      opacity: 0.8;
    }
    .message.at {
      outline: 2px solid var(--primary-color);
    }
    .message .who {
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .actions button:disabled {
      opacity: 0.6;
      cursor: progress;
    }
`;var Ft=50,W=class extends f{constructor(){super(),this._items=[],this._total=0,this._cursor=null,this._status="",this._open=null,this._busy=!1,this._error="",this._loading=!1,this._question=0,this._asked=0}t(t,e){return O(this.hass?.locale?.language??this.hass?.language,t,e)}_fail(t){this._error=t?.message??String(t)}firstUpdated(){this._load(!1)}async reload(){let t=this._question,e=++this._asked,s=()=>t===this._question&&e===this._asked;try{let i=await tt(this.hass,this._message(),"conversations",()=>this._items.length,Ft,s);i&&(this._items=i.rows,this._total=i.total,this._cursor=i.cursor,this._error="")}catch(i){s()&&this._fail(i)}this._open&&await this._reopen()}_message(){let t={type:"memory/conversations",limit:Ft};return this._status&&(t.statuses=[this._status]),t}async _load(t){let e=t?this._question:++this._question,s=t?this._asked:++this._asked,i=()=>e===this._question&&(t||s===this._asked),n=this._message();t&&this._cursor&&(n.cursor=this._cursor),this._loading=!0;try{let o=await this.hass.callWS(n);if(!i())return;this._items=t?et(this._items,o.conversations):o.conversations,this._total=o.total,this._cursor=o.cursor,this._error=""}catch(o){i()&&this._fail(o)}finally{i()&&(this._loading=!1)}}async show(t){try{this._open=await this.hass.callWS({type:"memory/conversation",...t}),this._error="",await this.updateComplete;let e=this.renderRoot.querySelector(".message.at");e?.scrollIntoView({block:"center"}),e?.focus()}catch(e){this._fail(e)}}async _reopen(){let t=this._open.conversation.id;try{let e=await this.hass.callWS({type:"memory/conversation",conversation:t});this._open?.conversation.id===t&&(this._open=e)}catch{this._open?.conversation.id===t&&(this._open=null)}}async _digest(){this._busy=!0;try{await this.hass.callWS({type:"memory/digest_conversation",conversation:this._open.conversation.id}),await this._reopen(),await this._load(!1)}catch(t){this._fail(t)}finally{this._busy=!1}}async _erase(){if(window.confirm(this.t("eraseConversationConfirm")))try{await this.hass.callWS({type:"memory/erase_conversation",conversation:this._open.conversation.id}),this._open=null,await this._load(!1)}catch(t){this._fail(t)}}_openMemory(t){this.dispatchEvent(new CustomEvent("open-memory",{detail:{id:t},bubbles:!0,composed:!0}))}_day(t){return new Date(t).toLocaleDateString(this.hass?.locale?.language??void 0,{weekday:"long",year:"numeric",month:"long",day:"numeric"})}_time(t){return new Date(t).toLocaleTimeString(this.hass?.locale?.language??void 0,{hour:"2-digit",minute:"2-digit"})}_state(t){let e=t.reason,s=e?qt(`reason_${e}`)?this.t(`reason_${e}`):e:"",i=s?`${this.t(`state_${t.status}`)}: ${s}`:this.t(`state_${t.status}`);return a`<span class="chip state ${t.status}">${i}</span>`}render(){if(!this.hass)return h;let t=[];for(let e of this._items){let s=this._day(e.started_at);(!t.length||t.at(-1).day!==s)&&t.push({day:s,items:[]}),t.at(-1).items.push(e)}return a`
      <div class="filters conversation-filters">
        <label>
          <span>${this.t("digestion")}</span>
          <select
            @change=${e=>{this._status=e.target.value,this._load(!1)}}
          >
            <option value="">${this.t("any")}</option>
            ${["waiting","done","skipped","failed"].map(e=>a`<option value=${e}>${this.t(`state_${e}`)}</option>`)}
          </select>
        </label>
      </div>
      ${this._error?a`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:h}
      <p class="count" aria-live="polite">
        ${this._loading&&!this._items.length?this.t("loading"):this._items.length?this.t("conversationsShown",{shown:this._items.length,total:this._total}):this.t("noConversations")}
      </p>
      ${t.map(({day:e,items:s})=>a`<h3 class="day">${e}</h3>
          <ul class="list">
            ${s.map(i=>this._row(i))}
          </ul>`)}
      ${this._cursor?a`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:h}
      ${this._open?this._detail(this._open):h}
    `}_row(t){return a`<li>
      <button
        class="memory"
        @click=${()=>this.show({conversation:t.id})}
        aria-label=${this.t("conversationLabel",{time:this._time(t.started_at),speaker:t.speaker,preview:t.preview})}
      >
        <span class="content">${t.preview||this.t("noWords")}</span>
        <span class="meta">
          <span>${this._time(t.started_at)}</span>
          <span class="chip ${t.scope==="household"?"house":"person"}">${t.speaker}</span>
          ${t.agent?a`<span>${t.agent}</span>`:h}
          ${t.device?a`<span>${t.device}</span>`:h}
          ${this._state(t)}
          <span>${this.t("messagesCount",{count:t.messages})}</span>
          ${t.produced?a`<span>${this.t("producedCount",{count:t.produced})}</span>`:h}
        </span>
      </button>
    </li>`}_detail({conversation:t,messages:e,memories:s,message_id:i}){let n=(o,c)=>a`<dt>${o}</dt><dd>${c}</dd>`;return a`<section class="detail" role="dialog" aria-label=${this.t("conversation")}>
      <header>
        <h2>${this.t("conversation")}</h2>
        <button @click=${()=>this._open=null} aria-label=${this.t("close")}>✕</button>
      </header>
      <dl>
        ${n(this.t("speaker"),t.speaker)}
        ${t.agent?n(this.t("agent"),t.agent):h}
        ${t.device?n(this.t("device"),t.device):h}
        ${n(this.t("started"),`${this._day(t.started_at)} ${this._time(t.started_at)}`)}
        ${n(this.t("digestion"),this._state(t))}
        ${t.retry_at?n(this.t("retryAt"),`${this._day(t.retry_at)} ${this._time(t.retry_at)}`):h}
      </dl>
      <ol class="messages">
        ${e.map(o=>a`<li
            class="message ${o.role} ${o.id===i?"at":""}"
            tabindex=${o.id===i?"0":"-1"}
            aria-current=${o.id===i?"true":"false"}
          >
            <span class="who">${o.role==="user"?o.speaker:this.t(`role_${o.role}`)}</span>
            <span class="said">${o.content||(o.tool_name?`(${o.tool_name})`:"")}</span>
          </li>`)}
      </ol>
      <h3>${this.t("gave")}</h3>
      ${s.length?a`<ul class="chain">
            ${s.map(o=>a`<li>
                <button class="link" @click=${()=>this._openMemory(o.id)}>#${o.id} ${o.content}</button>
              </li>`)}
          </ul>`:a`<p class="count chain">${this.t("gaveNothing")}</p>`}
      <div class="actions">
        <button @click=${this._digest} ?disabled=${this._busy}>${this._busy?this.t("digesting"):this.t("digestNow")}</button>
        <button class="danger" @click=${this._erase}>${this.t("eraseConversation")}</button>
      </div>
    </section>`}};y(W,"properties",{hass:{attribute:!1},narrow:{type:Boolean},_items:{state:!0},_total:{state:!0},_cursor:{state:!0},_status:{state:!0},_open:{state:!0},_busy:{state:!0},_error:{state:!0},_loading:{state:!0}}),y(W,"styles",[M,D`
      :host {
        min-height: 0;
        background: transparent;
      }
    `]);customElements.get("memory-conversations")||customElements.define("memory-conversations",W);var le=["assist_memory","markdown","lines","csv","mem0","ha_ai_memory","home_agent"];function he(r){let t=new Uint8Array(r),e="";for(let s=0;s<t.length;s+=32768)e+=String.fromCharCode(...t.subarray(s,s+32768));return btoa(e)}var L=class extends f{constructor(){super(),this._text="",this._file=null,this._format="",this._source="",this._owners={},this._preview=null,this._done=null,this._busy=!1,this._error="",this._progress=null}t(t,e){return O(this.hass?.locale?.language??this.hass?.language,t,e)}_persons(){return Object.values(this.hass?.states??{}).filter(t=>t.entity_id.startsWith("person.")).map(t=>({id:t.entity_id,name:t.attributes.friendly_name??t.entity_id}))}_scopeName(t){return t==="household"?this.t("household"):this.hass?.states?.[t]?.attributes?.friendly_name??t}_message(){let t=this._file?{data:this._file.data}:{text:this._text};return this._format&&(t.format=this._format),this._source.trim()&&(t.source=this._source.trim()),Object.keys(this._owners).length&&(t.owners=this._owners),t}async _ask(t){this._busy=!0,this._error="";try{return await this.hass.callWS({type:t,...this._message()})}catch(e){return this._error=e?.message??String(e),null}finally{this._busy=!1}}async _runPreview(){this._preview=await this._ask("memory/import_preview")}async _runImport(){let t;try{t=await this.hass.connection.subscribeMessage(s=>this._progress=s,{type:"memory/import_progress"})}catch{t=void 0}let e;try{e=await this._ask("memory/import")}finally{this._progress=null,t?.()}e&&(this._done=e,this._preview=null,this.dispatchEvent(new CustomEvent("imported",{bubbles:!0,composed:!0})))}async _picked(t){let e=t.target.files?.[0];this._preview=null,this._owners={},this._file=e?{name:e.name,data:he(await e.arrayBuffer())}:null}_changed(t,e){this[t]=e,this._preview=null}async _own(t,e){this._owners={...this._owners,[t]:e},await this._runPreview()}_close(){this.dispatchEvent(new CustomEvent("close",{bubbles:!0,composed:!0}))}_form(){return a`<label>
        <span>${this.t("importPaste")}</span>
        <textarea
          rows="6"
          .value=${this._text}
          ?disabled=${this._file!==null}
          @input=${t=>this._changed("_text",t.target.value)}
        ></textarea>
      </label>
      <label>
        <span>${this.t("importFile")}</span>
        <input type="file" @change=${this._picked} />
      </label>
      <label>
        <span>${this.t("importFormat")}</span>
        <select @change=${t=>this._changed("_format",t.target.value)}>
          <option value="">${this.t("importDetect")}</option>
          ${le.map(t=>a`<option value=${t}>${this.t(`format_${t}`)}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("importSource")}</span>
        <input .value=${this._source} @input=${t=>this._changed("_source",t.target.value)} />
      </label>`}_plan(t){let e=(s,i)=>a`<dt>${this.t(s)}</dt><dd>${i}</dd>`;return a`<dl class="import-plan">
        ${e("importFormatFound",this.t(`format_${t.format}`))}
        ${e("importTotal",t.total)} ${e("importNew",t.new)}
        ${e("importDuplicates",t.duplicates)} ${e("importSupersedes",t.supersedes)}
        ${e("importHistory",t.history)} ${e("importSecrets",t.secrets)}
      </dl>
      <h3>${this.t("importOwners")}</h3>
      <ul class="import-owners">
        ${Object.entries(t.owners).map(([s,i])=>a`<li>
            <label>
              <span>${s||this.t("importNoOwner")} (${t.by_scope[i]??0})</span>
              <select
                aria-label=${s||this.t("importNoOwner")}
                @change=${n=>this._own(s,n.target.value)}
              >
                ${[["household",this.t("household")],...this._persons().map(n=>[n.id,n.name])].map(([n,o])=>a`<option value=${n} ?selected=${n===i}>${o}</option>`)}
              </select>
            </label>
          </li>`)}
      </ul>`}render(){let t=this._file!==null||this._text.trim()!=="";return a`<section class="detail" role="dialog" aria-label=${this.t("import")}>
      <header>
        <h2>${this.t("import")}</h2>
        <button @click=${this._close} aria-label=${this.t("close")}>✕</button>
      </header>
      ${this._done?a`<p role="status">${this.t("importDone",{count:this._done.imported,duplicates:this._done.duplicates})}</p>`:this._form()}
      ${this._progress?a`<p role="status">
            <progress max=${this._progress.total} .value=${this._progress.done}></progress>
            ${this.t("importProgress",this._progress)}
          </p>`:h}
      ${this._error?a`<p class="error" role="alert">${this._error}</p>`:h}
      ${this._preview?this._plan(this._preview):h}
      <div class="actions">
        ${this._done?a`<button @click=${this._close}>${this.t("close")}</button>`:a`<button ?disabled=${!t||this._busy} @click=${this._runPreview}>
                ${this.t("importPreview")}
              </button>
              <button class="add" ?disabled=${!this._preview||this._busy} @click=${this._runImport}>
                ${this.t("import")}
              </button>
              <button @click=${this._close}>${this.t("cancel")}</button>`}
      </div>
    </section>`}};y(L,"properties",{hass:{attribute:!1},_text:{state:!0},_file:{state:!0},_format:{state:!0},_source:{state:!0},_owners:{state:!0},_preview:{state:!0},_done:{state:!0},_busy:{state:!0},_error:{state:!0},_progress:{state:!0}}),y(L,"styles",M);customElements.get("memory-import-dialog")||customElements.define("memory-import-dialog",L);var Vt=50,ce=250,jt=["fact","preference","instruction","event","summary","profile","other"],de=["tool","digestion","action","import"],B=class extends f{constructor(){super(),this._memories=[],this._total=0,this._cursor=null,this._query="",this._person="",this._status="active",this._order="newest",this._open=null,this._loading=!1,this._error="",this._editing=null,this._overview=null,this._view="memories",this._type="",this._tag="",this._origin="",this._since="",this._until="",this._selected=new Set,this._filtersOpen=!1,this._notice="",this._question=0,this._asked=0,this._typing=void 0,this._unsubscribe=void 0}_fail(t){this._error=t?.message??String(t)}t(t,e){return O(this.hass?.locale?.language??this.hass?.language,t,e)}connectedCallback(){super.connectedCallback(),this.hass&&this._start()}disconnectedCallback(){super.disconnectedCallback(),this._unsubscribe?.then(t=>t()).catch(()=>{}),this._unsubscribe=void 0}updated(t){t.has("hass")&&this.hass&&!this._unsubscribe&&this._start()}_start(){this._unsubscribe=this.hass.connection.subscribeMessage(()=>{this._refresh(),this._loadOverview(),this.renderRoot.querySelector("memory-conversations")?.reload()},{type:"memory/subscribe"}),this._load(!1),this._loadOverview()}async _loadOverview(){try{this._overview=await this.hass.callWS({type:"memory/overview"})}catch(t){this._fail(t)}}async _refreshProfile(t){try{await this.hass.callWS({type:"memory/refresh_profile",person:t.household?"household":t.scope}),await this._loadOverview()}catch(e){this._fail(e)}}_overviewPart(){let t=this._overview;if(!t)return h;let{counts:e,health:s,profiles:i}=t,n=(s.database_bytes/1048576).toFixed(1);return a`<details class="overview">
      <summary>
        ${this.t("overview")}:
        ${["active","expiring","archived","superseded"].map(o=>a`<span class="chip">${this.t(o)} ${e[o]}</span>`)}
      </summary>
      <p class="health">
        ${this.t("health",{size:n,search:s.model??this.t("keywordOnly"),waiting:s.digestion_waiting,calls:s.ai_task_calls_last_hour,cap:s.ai_task_max_calls_per_hour})}
        ${s.embedding?a`<br />${this.t("embedding",{provider:s.embedding.provider,model:s.embedding.model,progress:Math.round(s.embedding.progress),pending:s.embedding.pending,state:this.t(s.embedding.connected?"connected":"unreachable")})}`:h}
      </p>
      <h3>${this.t("profiles")}</h3>
      ${i.length?a`<ul class="profiles">
            ${i.map(o=>a`<li>
                <span class="chip ${o.household?"house":"person"}">${o.owner}</span>
                <span class="content">${o.content}</span>
                <button class="link" @click=${()=>this._refreshProfile(o)}>
                  ${this.t("refresh")}
                </button>
              </li>`)}
          </ul>`:a`<p class="count">${this.t("noProfiles")}</p>`}
    </details>`}_browseMessage(){let t={type:"memory/browse",status:this._status,limit:Vt,order:this._query.trim()?"relevance":this._order};if(this._query.trim()&&(t.query=this._query.trim()),this._person&&(t.person=this._person),this._type&&(t.types=[this._type]),this._tag.trim()&&(t.tags=[this._tag.trim()]),this._origin&&(t.origins=[this._origin]),this._since&&(t.since=new Date(`${this._since}T00:00`).toISOString()),this._until){let e=new Date(`${this._until}T00:00`);e.setDate(e.getDate()+1),t.until=e.toISOString()}return t}async _load(t){let e=t?this._question:++this._question,s=t?this._asked:++this._asked,i=()=>e===this._question&&(t||s===this._asked),n=this._browseMessage();t&&this._cursor&&(n.cursor=this._cursor),this._loading=!0;try{let o=await this.hass.callWS(n);if(!i())return;this._memories=t?et(this._memories,o.memories):o.memories,t||this._keepSelection(),this._total=o.total,this._cursor=o.cursor,this._error=""}catch(o){i()&&this._fail(o)}finally{i()&&(this._loading=!1)}}async _refresh(){let t=this._question,e=++this._asked;try{let s=await tt(this.hass,this._browseMessage(),"memories",()=>this._memories.length,Vt,()=>t===this._question&&e===this._asked);if(!s)return;this._memories=s.rows,this._total=s.total,this._cursor=s.cursor,this._keepSelection(),this._error=""}catch(s){t===this._question&&e===this._asked&&this._fail(s)}this._open&&this._editing?.id!==this._open.memory.id&&await this._reopen()}_keepSelection(){let{kept:t,dropped:e}=Bt(this._selected,this._memories);e&&(this._selected=t,this._notice=this.t("selectionDropped",{count:e}))}async _reopen(){let t=this._open.memory.id;try{let e=await this.hass.callWS({type:"memory/get",memory_id:t});this._open?.memory.id===t&&(this._open=e)}catch(e){if(this._open?.memory.id!==t)return;this._open=null,this._notice=this.t("openGone",{id:t,error:e?.message??String(e)})}}_menu(){this.dispatchEvent(new Event("hass-toggle-menu",{bubbles:!0,composed:!0}))}_typed(t){this._query=t.target.value,clearTimeout(this._typing),this._typing=setTimeout(()=>this._load(!1),ce)}_chose(t,e){this[t]=e.target.value,this._load(!1)}async _show(t){try{this._open=await this.hass.callWS({type:"memory/get",memory_id:t}),this._error=""}catch(e){this._fail(e)}}async _act(t,e,s=!1){if(!(s&&!window.confirm(this.t("purgeConfirm"))))try{let i={type:t,memory_ids:[e]};s&&(i.purge=!0),await this.hass.callWS(i),s?this._open=null:await this._show(e),await this._load(!1)}catch(i){this._fail(i)}}async _actOnSelected(t,e=!1){let s=[...this._selected];if(s.length&&!(e&&!window.confirm(this.t("purgeManyConfirm",{count:s.length}))))try{let i={type:t,memory_ids:s};e&&(i.purge=!0),await this.hass.callWS(i),this._selected=new Set,this._notice="",this._open&&s.includes(this._open.memory.id)&&(this._open=null),await this._load(!1)}catch(i){this._fail(i)}}_toggle(t,e){let s=new Set(this._selected);e.target.checked?s.add(t):s.delete(t),this._selected=s,this._notice=""}async _openConversation(t){this._open=null,this._editing=null,this._view="conversations",await this.updateComplete,await this.renderRoot.querySelector("memory-conversations")?.show({memory_id:t})}_openMemory(t){this._view="memories",this._show(t.detail.id)}_edit(t){this._editing=t?{id:t.id,content:t.content,memory_type:t.type,tags:t.tags.join(", "),person:t.household?"household":t.scope,expires_at:t.expires_at?t.expires_at.slice(0,16):""}:{content:"",memory_type:"fact",tags:"",person:"household",expires_at:""}}async _save(t){t.preventDefault();let e=new FormData(t.target),s=String(e.get("tags")??"").split(",").map(c=>c.trim()).filter(Boolean),i=String(e.get("expires_at")??""),n=String(e.get("person")),o={content:String(e.get("content")??""),memory_type:String(e.get("memory_type")),tags:s};try{let c;this._editing.id?c=(await this.hass.callWS({...o,type:"memory/update",memory_id:this._editing.id,person:n,expires_at:i?new Date(i).toISOString():null})).memory.id:(n!=="household"&&(o.person=n),i&&(o.expires_at=new Date(i).toISOString()),c=(await this.hass.callWS({...o,type:"memory/add"})).id),this._editing=null,await this._show(c),await this._load(!1)}catch(c){this._fail(c)}}_editor(){let t=this._editing,e=jt.filter(s=>s!=="profile");return a`<form class="editor" @submit=${this._save} aria-label=${t.id?this.t("edit"):this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${t.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${e.map(s=>a`<option value=${s} ?selected=${s===t.memory_type}>${s}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${t.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${t.person==="household"}>${this.t("household")}</option>
          ${this._persons().map(s=>a`<option value=${s.id} ?selected=${s.id===t.person}>${s.name}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${t.expires_at} />
      </label>
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${()=>this._editing=null}>${this.t("cancel")}</button>
      </div>
    </form>`}_persons(){return Object.values(this.hass?.states??{}).filter(t=>t.entity_id.startsWith("person.")).map(t=>({id:t.entity_id,name:t.attributes.friendly_name??t.entity_id}))}_date(t){return t?new Date(t).toLocaleString(this.hass?.locale?.language??void 0):this.t("never")}render(){if(!this.hass)return h;let t=this._view==="memories";return a`
      <header class=${this.narrow?"narrow":""}>
        ${this.narrow?a`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`:h}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${()=>this._edit(null)}>${this.t("add")}</button>
        <button class="add" @click=${()=>this._importing=!0}>${this.t("import")}</button>
        <div class="tabs" role="tablist">
          ${["memories","conversations"].map(e=>a`<button
              role="tab"
              aria-selected=${this._view===e?"true":"false"}
              @click=${()=>this._view=e}
            >
              ${this.t(e)}
            </button>`)}
        </div>
        ${t?this._searchAndFilters():h}
      </header>
      ${this._error?a`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:h}
      <main>
        ${this._overviewPart()}
        ${t?this._memoryList():a`<memory-conversations
              .hass=${this.hass}
              .narrow=${this.narrow}
              @open-memory=${this._openMemory}
            ></memory-conversations>`}
      </main>
      ${this._open?this._detail(this._open):h}
      ${this._editing&&!this._editing.id?a`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            ${this._editor()}
          </section>`:h}
      ${this._importing?a`<memory-import-dialog
            .hass=${this.hass}
            @close=${()=>this._importing=!1}
          ></memory-import-dialog>`:h}
    `}_select(t,e,s,i=t){return a`<label>
      <span>${t}</span>
      <select @change=${n=>this._chose(e,n)} aria-label=${i}>
        ${s.map(([n,o])=>a`<option value=${n} ?selected=${n===this[e]}>${o}</option>`)}
      </select>
    </label>`}_searchAndFilters(){return a`<input
        type="search"
        .value=${this._query}
        @input=${this._typed}
        placeholder=${this.t("searchHint")}
        aria-label=${this.t("search")}
      />
      ${this.narrow?a`<button
            class="add"
            aria-expanded=${this._filtersOpen?"true":"false"}
            @click=${()=>this._filtersOpen=!this._filtersOpen}
          >
            ${this.t("filters",{count:this._activeFilters()})}
          </button>`:h}
      <div class="filters" ?hidden=${this.narrow&&!this._filtersOpen}>
        ${this._select(this.t("owner"),"_person",[["",this.t("everyone")],["household",this.t("household")],...this._persons().map(t=>[t.id,t.name])])}
        ${this._select(this.t("type"),"_type",[["",this.t("any")],...jt.map(t=>[t,this.t(`type_${t}`)])])}
        ${this._select(this.t("status"),"_status",["active","expiring","archived","superseded","any"].map(t=>[t,this.t(t)]))}
        ${this._select(this.t("origin"),"_origin",[["",this.t("any")],...de.map(t=>[t,this.t(`origin_${t}`)])])}
        <label>
          <span>${this.t("tag")}</span>
          <input
            .value=${this._tag}
            @change=${t=>this._chose("_tag",t)}
            aria-label=${this.t("tag")}
            placeholder=${this.t("tagHint")}
          />
        </label>
        <label>
          <span>${this.t("from")}</span>
          <input type="date" .value=${this._since} @change=${t=>this._chose("_since",t)} aria-label=${this.t("from")} />
        </label>
        <label>
          <span>${this.t("to")}</span>
          <input type="date" .value=${this._until} @change=${t=>this._chose("_until",t)} aria-label=${this.t("to")} />
        </label>
        <label>
          <span>${this.t("order")}</span>
          <select
            @change=${t=>this._chose("_order",t)}
            aria-label=${this.t("order")}
            ?disabled=${!!this._query.trim()}
          >
            ${["newest","recalled"].map(t=>a`<option value=${t} ?selected=${t===this._order}>${this.t(t)}</option>`)}
          </select>
        </label>
      </div>`}_activeFilters(){return[this._person,this._type,this._origin,this._tag.trim(),this._since,this._until].filter(Boolean).length+(this._status==="active"?0:1)}_memoryList(){let t=this._selected.size;return a`
      ${t?a`<div class="bulk" role="toolbar" aria-label=${this.t("selected",{count:t})}>
            <span>${this.t("selected",{count:t})}</span>
            <button class="more" @click=${()=>this._actOnSelected("memory/forget")}>${this.t("forget")}</button>
            <button class="more" @click=${()=>this._actOnSelected("memory/restore")}>${this.t("restore")}</button>
            <button class="more danger" @click=${()=>this._actOnSelected("memory/forget",!0)}>
              ${this.t("purge")}
            </button>
            <button class="link" @click=${()=>this._selected=new Set}>${this.t("clearSelection")}</button>
          </div>`:h}
      ${this._notice?a`<p class="notice" role="status">${this._notice}</p>`:h}
      <p class="count" aria-live="polite">
        ${this._loading&&!this._memories.length?this.t("loading"):this._memories.length?this.t("shown",{shown:this._memories.length,total:this._total}):this.t("none")}
      </p>
      <ul class="list">
        ${Lt(this._memories,e=>e.id,e=>this._row(e))}
      </ul>
      ${this._cursor?a`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:h}
    `}_row(t){return a`<li class="row">
      <input
        type="checkbox"
        .checked=${this._selected.has(t.id)}
        @change=${e=>this._toggle(t.id,e)}
        aria-label=${this.t("select",{id:t.id})}
      />
      <button
        class="memory ${t.status}"
        @click=${()=>this._show(t.id)}
        aria-label=${`#${t.id}: ${t.content}`}
      >
        <span class="content">${t.content}</span>
        <span class="meta">
          <span class="chip ${t.household?"house":"person"}">${t.owner}</span>
          <span>${this.t(`type_${t.type}`)}</span>
          <span>${this._date(t.created_at)}</span>
          ${t.tags.map(e=>a`<span class="chip">#${e}</span>`)}
          ${t.status!=="active"?a`<span class="chip">${this.t(t.status)}</span>`:h}
        </span>
      </button>
    </li>`}_detail({memory:t,superseded:e,superseded_by:s,has_conversation:i}){let n=(o,c)=>a`<dt>${o}</dt><dd>${c}</dd>`;return a`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${t.id}`}>
      <header>
        <h2>#${t.id}</h2>
        <button
          @click=${()=>{this._open=null,this._editing=null}}
          aria-label=${this.t("close")}
        >
          ✕
        </button>
      </header>
      ${this._editing?.id===t.id?this._editor():a`<p class="full">${t.content}</p>`}
      <dl>
        ${n(this.t("owner"),t.owner)}
        ${n(this.t("type"),this.t(`type_${t.type}`))}
        ${n(this.t("status"),this.t(t.status))}
        ${n(this.t("tags"),t.tags.join(", ")||"\u2013")}
        ${n(this.t("created"),this._date(t.created_at))}
        ${n(this.t("updated"),this._date(t.updated_at))}
        ${t.expires_at?n(this.t("expires"),this._date(t.expires_at)):h}
        ${n(this.t("recalledTimes"),t.recall_count)}
        ${n(this.t("lastRecalled"),this._date(t.last_recalled_at))}
        ${n(this.t("origin"),i?a`<button class="link" @click=${()=>this._openConversation(t.id)}>
                ${this.t(`origin_${t.source.origin}`)} · ${this.t("openConversation")}
              </button>`:this.t(`origin_${t.source.origin}`))}
      </dl>
      ${e.length?this._chain(this.t("replaced"),e):h}
      ${s.length?this._chain(this.t("replacedBy"),s):h}
      <div class="actions">
        ${t.status==="active"&&this._editing?.id!==t.id?a`<button @click=${()=>this._edit(t)}>${this.t("edit")}</button>`:h}
        ${t.status==="active"?a`<button @click=${()=>this._act("memory/forget",t.id)}>${this.t("forget")}</button>`:h}
        ${t.status==="archived"?a`<button @click=${()=>this._act("memory/restore",t.id)}>${this.t("restore")}</button>`:h}
        <button class="danger" @click=${()=>this._act("memory/forget",t.id,!0)}>
          ${this.t("purge")}
        </button>
      </div>
    </section>`}_chain(t,e){return a`<h3>${t}</h3>
      <ol class="chain">
        ${e.map(s=>a`<li><button class="link" @click=${()=>this._show(s.id)}>
              #${s.id} ${s.content}
            </button></li>`)}
      </ol>`}};y(B,"properties",{hass:{attribute:!1},narrow:{type:Boolean},panel:{attribute:!1},_memories:{state:!0},_total:{state:!0},_cursor:{state:!0},_query:{state:!0},_person:{state:!0},_status:{state:!0},_order:{state:!0},_open:{state:!0},_loading:{state:!0},_error:{state:!0},_editing:{state:!0},_overview:{state:!0},_view:{state:!0},_type:{state:!0},_tag:{state:!0},_origin:{state:!0},_since:{state:!0},_until:{state:!0},_selected:{state:!0},_filtersOpen:{state:!0},_notice:{state:!0},_importing:{state:!0}}),y(B,"styles",M);customElements.get("memory-panel")||customElements.define("memory-panel",B);export{B as MemoryPanel};
/*! Bundled license information:

@lit/reactive-element/css-tag.js:
  (**
   * @license
   * Copyright 2019 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

@lit/reactive-element/reactive-element.js:
lit-html/lit-html.js:
lit-element/lit-element.js:
lit-html/directive.js:
lit-html/directives/repeat.js:
  (**
   * @license
   * Copyright 2017 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/is-server.js:
  (**
   * @license
   * Copyright 2022 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/directive-helpers.js:
  (**
   * @license
   * Copyright 2020 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)
*/
